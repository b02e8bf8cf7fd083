"""Every split's watermark changes under periodic emission as DataFrames (engine/timeline/periodic_changes.py): a
hand-worked timeline (first values, idleness after a group and before a split's first row, silence advance), and
the same changes as the driver's numpy closed forms (split_changes.py) on generated groups."""
from __future__ import annotations

import numpy as np
import pytest

from event_replay.engine.timeline.carry import Ticks
from event_replay.engine.timeline.periodic_changes import split_changes as frame_changes
from event_replay.engine.timeline.split_changes import SplitGroups, split_changes as numpy_changes
from event_replay.semantics.durations import NEG_INF
from timeline_cases import timeline_config

pytestmark = pytest.mark.spark

TICKS = Ticks(interval=100, first=100, last=1500, origin=100)


def _changes(spark, rows, wm: dict, splits=("p0", "p1"), ticks=TICKS):
    cfg = timeline_config({"strategy": "bounded_out_of_orderness", "max_out_of_orderness": 0, "interval": 100, **wm})
    df = spark.createDataFrame(rows, "split string, _tick long, event_time long")
    changes, groups = frame_changes(df, cfg, list(splits), ticks, None)
    got = sorted((r["split"], r["tick"], r["value"], r["idle"]) for r in changes.collect())
    return got, cfg.watermark, groups


def test_first_values_and_idleness_by_hand(spark):
    rows = [("p0", 100, 1000), ("p0", 300, 900), ("p0", 500, 2000)]
    got, wmc, groups = _changes(spark, rows, {"idle_timeout": 250})
    lag = wmc.lag_ms
    # D = 250 // 100 + 1 = 3: a split with rows at t is idle at t + (1 + D) * I = t + 400; p1 (no rows) from the
    # origin + D * I. The group at 300 publishes no new value (its max is below 1000).
    assert got == [("p0", 100, 1000 - lag, False), ("p0", 500, 2000 - lag, False), ("p0", 900, 2000 - lag, True),
                   ("p1", 400, NEG_INF, True)]
    assert sorted((r["t"], r["n_ticks"], r["max_ts"]) for r in groups.collect()) == \
        [(100, 2, 1000), (300, 2, 1000), (500, 11, 2000)]


def test_silence_advance_ramps_one_interval_a_tick(spark):
    got, wmc, _ = _changes(spark, [("p0", 100, 1000), ("p0", 700, 1100)], {"advance_after_silence": 250},
                           splits=("p0",), ticks=Ticks(interval=100, first=100, last=900, origin=100))
    lag = wmc.lag_ms
    # k0 = 250 // 100 + 1 = 3: at the k-th active tick after a group (k >= 3, at t + (k-1) * I) the split publishes
    # max_ts + k * I - lag. Six ticks of silence after 100 advance max_ts to 1600, above the row at 700 (1100): the
    # group at 700 publishes 1600 - lag again (no change), then ramps from its third tick, 900.
    ramp = [("p0", 100 + (k - 1) * 100, 1000 + k * 100 - lag, False) for k in range(3, 7)]
    assert got == [("p0", 100, 1000 - lag, False), *ramp, ("p0", 900, 1600 + 300 - lag, False)]


@pytest.mark.parametrize("seed", range(4))
def test_the_same_changes_as_the_numpy_closed_forms(spark, seed):
    rng = np.random.default_rng(seed)
    wm = [{"idle_timeout": 250}, {"advance_after_silence": 150, "idle_timeout": 600}, {},
          {"advance_after_silence": 50}][seed]
    splits = ["p0", "p1", "p2"]
    rows = sorted({(str(rng.choice(splits[:2])), int(t) * 100, int(e)) for t, e in
                   zip(rng.integers(1, 16, 25), rng.integers(0, 3000, 25))})
    got, wmc, _ = _changes(spark, rows, wm, splits=splits)
    groups: dict[tuple[int, int], int] = {}
    for s, t, e in rows:
        k = (splits.index(s), t)
        groups[k] = max(groups.get(k, e), e)
    keys = sorted(groups)
    numpy = numpy_changes(SplitGroups(np.array([k[0] for k in keys], np.int32), np.array([k[1] for k in keys]),
                                      np.array([groups[k] for k in keys])), wmc, len(splits), TICKS.end_bound,
                          TICKS.origin)
    want = sorted((splits[s], int(t), int(v), bool(i)) for s, t, v, i in
                  zip(numpy.split, numpy.tick, numpy.value, numpy.idle))
    assert got == want and got
