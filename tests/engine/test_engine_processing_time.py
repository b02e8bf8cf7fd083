"""The Spark engine's processing-time windows (engine/processing_time.py) equal the reference model's, in one
replay of the range and partition by partition with hold (the carried rows of windows whose timer is later)."""
from __future__ import annotations

import dataclasses
import random

import pytest

from event_replay.semantics.model import LogRow  # noqa: E402
from partition_cases import diff, engine_partitioned, reference_outputs  # noqa: E402
from processing_time_cases import BASE, cfg_of, repro_rows  # noqa: E402

pytestmark = pytest.mark.spark


def _random_rows(seed: int) -> list[LogRow]:
    rng = random.Random(seed)
    rows, t = [], BASE
    for i in range(120):
        t += rng.choice([0, 1, 40, 250, 700, 1500])
        rows.append(LogRow(rng.choice(["p0", "p1"]), i, t, 0, rng.choice(["a", "b"]), {"value": rng.randint(0, 9)}))
    return rows


CASES = {
    "repro_tumbling": (repro_rows(), {"type": "tumbling", "size": 1000}),
    "sliding_offset": (_random_rows(1), {"type": "sliding", "size": 1000, "slide": 300, "offset": 100}),
    "session": (_random_rows(2), {"type": "session", "gap": 600}),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("eoi", ["hold", "flush"])
def test_engine_equals_reference_whole_and_partitioned(spark, name, eoi, tmp_path):
    rows, window = CASES[name]
    last = max(r.arrival_time for r in rows)
    end = last + 1 if eoi == "flush" else BASE + 7000 if name == "repro_tumbling" else last + 1
    cfg = cfg_of(window, start=BASE, end=end, end_of_input=eoi)
    cfg = dataclasses.replace(cfg, aggregations={"cnt": "count(*)", "total": "sum(value)"},
                              output=dataclasses.replace(cfg.output, path=str(tmp_path / "out")))  # the state
    rows = [dataclasses.replace(r, payload={"value": r.payload.get("value", 1)}) for r in rows]
    cut = BASE + (end - BASE) // 2
    _, whole = reference_outputs(rows, cfg, ["p0", "p1"], [BASE, cut, end])
    for bounds in ([BASE, end], [BASE, cut, end]):
        got = engine_partitioned(spark, rows, cfg, ["p0", "p1"], bounds)
        assert got == whole, (bounds, diff(got, whole))
    if name == "repro_tumbling":
        assert len(whole["firings"]) == 5
