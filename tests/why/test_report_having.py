"""The why-report's window total under a HAVING (why/report.py): HAVING may drop a window's first firing and keep a
later one (docs/semantics.md, "HAVING"), so the total is every written window, not only those with a first firing
(the holders' rows). In make test (tests/why/test_report.py is the integration suite's): a few dozen rows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from event_replay.semantics.config import parse_config
from quality_outputs import write_case
from strategies import random_case

pytestmark = pytest.mark.spark


def test_windows_whose_first_firing_having_dropped_are_still_counted(spark, tmp_path):
    import pyarrow.parquet as pq

    from event_replay.semantics.config import to_raw
    from event_replay.semantics.reference import replay
    from event_replay.why.report import why_report

    case = next(c for c in map(random_case, range(500)) if c.cfg.having is None and len(c.rows) > 40
                and any(f.fire_index > 0 for f in replay(c.rows, c.cfg, declared_splits=c.declared_splits).firings))
    out = tmp_path / "out"
    cfg, tables = write_case(case, out)
    w = tables["windows"]
    refired = w[w.fire_index > 0][["key", "window_start", "window_end"]].drop_duplicates()
    dropped = w.merge(refired, on=["key", "window_start", "window_end"], how="left", indicator=True)
    kept = w[~((dropped["_merge"] == "both") & (w.fire_index == 0)).to_numpy()]  # as HAVING dropping firing 0 would
    path = next((out / "windows").glob("*.parquet"))
    pq.write_table(pq.read_table(path).take(kept.index.to_numpy()), path)
    raw = to_raw(cfg)
    raw["having"] = "key IS NULL OR key IS NOT NULL"  # the outputs above are what a HAVING wrote: any will do
    cfg = parse_config(raw)
    summary = json.loads(Path(why_report(str(out), cfg, spark=spark)).with_name("summary.json").read_text())
    assert summary["firings"] == len(kept) < len(w)
    assert summary["windows"] == len(kept[["key", "window_start", "window_end"]].drop_duplicates()) > len(
        kept[kept.fire_index == 0])
