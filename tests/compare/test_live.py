"""Reading the live output (compare/live.py) on small hand-made tables: every bad input named (a missing column,
a value that does not convert, epoch seconds for ms)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from compare_frames import S, T0, cfg
from event_replay.compare.live import AGG_PREFIX
from event_replay.compare.live_spec import CompareInputError, LiveSpec


def _live_table(tmp: Path, rows: list[dict], name: str = "live", fmt: str = "parquet") -> str:
    path = tmp / name
    path.mkdir()
    if fmt == "json":
        (path / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path / "part-0.parquet")
    return str(path)


def _types():
    from pyspark.sql import types as T

    return {"cnt": T.LongType(), "total": T.LongType()}


@pytest.mark.spark
def test_live_reading_normalises_and_names_bad_input(spark, tmp_path):
    from event_replay.compare.live import read_live

    good = [{"user": "a", "ws": "2024-01-01T00:00:00Z", "we": "2024-01-01T00:00:10Z", "n": 3, "s": "12", "wm": T0 + S}]
    path = _live_table(tmp_path, good, fmt="json")
    spec = LiveSpec(path=path, format="json", columns={"key": "user", "window_start": "ws", "window_end": "we",
                                                       "cnt": "n", "total": "s", "fire_watermark": "wm"})
    live = read_live(spark, spec, cfg(), _types())
    r = live.firings.first()
    assert (r.key, r.window_start_ms, r.window_end_ms, r[AGG_PREFIX + "cnt"], r[AGG_PREFIX + "total"],
            r.fire_watermark_ms) == ("a", T0, T0 + S, 3, 12, T0 + S)
    assert live.has == frozenset({"fire_watermark"}) and live.rows == 1

    def refused(rows, match, **columns):
        p = _live_table(tmp_path, rows, name=f"bad{len(list(tmp_path.iterdir()))}", fmt="json")
        with pytest.raises(CompareInputError, match=match):
            read_live(spark, LiveSpec(path=p, format="json", columns={**spec.columns, **columns}), cfg(), _types())

    missing = [{k: v for k, v in good[0].items() if k != "n"}]
    refused(missing, "live column 'n'.*missing: role cnt")
    refused([{**good[0], "n": "three"}], "live column 'n'.*not a valid value of aggregate cnt.*'three'")
    refused([{**good[0], "n": 2.5}], "live column 'n'.*not a valid value of aggregate cnt.*2.5")
    refused([{**good[0], "ws": "soon"}], "live column 'ws'.*not a valid window_start.*'soon'")
    refused([{**good[0], "ws": T0 // 1000, "we": T0 // 1000 + 10}], "no live window is 10000 ms long.*epoch seconds")
    refused([{**good[0], "user": {"id": 1}}], "live column 'user'.*for the key: not comparable")
    refused(good, "live column 'fired'.*missing", fire_time="fired")
    with pytest.raises(CompareInputError, match="--live: no such file"):
        read_live(spark, LiveSpec(path=str(tmp_path / "nowhere")), cfg(), _types())


def test_a_keyless_job_s_live_output_has_no_key(spark, tmp_path):
    """`source.columns.key: null`: no key column is read (a keyless Flink job writes none) and every window and late
    row takes KEYLESS_KEY, as the replay's side does, so the comparison's joins on the key match; mapping one is
    refused."""
    from event_replay.compare.live import KEYLESS_KEY, read_live
    from event_replay.semantics.config import parse_config, to_raw

    raw = to_raw(cfg())
    raw["source"]["columns"] = {"key": None}
    keyless = parse_config(raw)
    firings = _live_table(tmp_path, [{"window_start": T0, "window_end": T0 + S, "cnt": 3, "total": 12}], fmt="json")
    late = _live_table(tmp_path, [{"split": "p0", "offset": 7, "event_time": T0 + 1, "arrival_time": T0 + 2 * S}],
                       name="late", fmt="json")
    live = read_live(spark, LiveSpec(path=firings, format="json", late_path=late), keyless, _types())
    assert [tuple(r) for r in live.firings.select("key", "window_start_ms", AGG_PREFIX + "cnt").collect()] == \
        [(KEYLESS_KEY, T0, 3)]
    assert [tuple(r) for r in live.late.select("late_key", "late_split", "late_offset").collect()] == \
        [(KEYLESS_KEY, "p0", 7)]
    with pytest.raises(CompareInputError, match="no key"):
        read_live(spark, LiveSpec(path=firings, format="json", columns={"key": "cnt"}), keyless, _types())
    with pytest.raises(CompareInputError, match="live column 'key'.*missing"):  # a keyed job's live output needs one
        read_live(spark, LiveSpec(path=firings, format="json"), cfg(), _types())
