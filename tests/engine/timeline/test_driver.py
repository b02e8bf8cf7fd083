"""engine/timeline/driver.py, the periodic timeline on the driver: the floor lookup of the stream watermark before
each row's tick, the watermark changes in the outputs' order, carried groups placed among the tick table's."""
from __future__ import annotations

import numpy as np
import pytest

from event_replay.engine.timeline import driver
from event_replay.engine.timeline.tick_table import TickTable
from event_replay.engine.timeline.stream import StreamTimeline


def _stream(ticks, watermarks) -> StreamTimeline:
    empty = np.array([], dtype=np.int64)
    return StreamTimeline(np.array(ticks, dtype=np.int64), np.array(watermarks, dtype=np.int64),
                          np.zeros(len(ticks), bool), empty, empty, empty, empty.astype(bool), empty, empty, empty,
                          empty.astype(bool))


def test_the_floor_table_keeps_the_first_tick_and_where_the_watermark_moves():
    ticks, wms = driver.floor_table(_stream([0, 200, 400, 600, 800], [5, 5, 9, 9, 12]))
    assert (ticks.tolist(), wms.tolist()) == ([0, 400, 800], [5, 9, 12])


def test_a_rows_watermark_is_the_streams_after_the_last_tick_before_its_own():
    floor_ticks, floor_wm = np.array([0, 400, 800]), np.array([5, 9, 12])
    lookup = driver._tick_lookup(floor_ticks, floor_wm, np.array([0, 200, 400, 600, 1000]), 200, -99)
    assert lookup.column("wm_before").to_pylist() == [-99, 5, 5, 9, 12]
    assert lookup.column("_tick").to_pylist() == [0, 200, 400, 600, 1000]


def test_the_watermark_changes_come_in_the_outputs_order():
    """Each tick's split changes (by split) before the stream's change, ticks ascending: the write's sort then finds
    one run in place (io/output.py). The splits' changes come split by split, as split_changes gives them."""
    no = np.array([], dtype=np.int64)
    stream = StreamTimeline(
        no, no, no.astype(bool), no,
        change_tick=np.array([200, 400, 600], np.int64), change_value=np.array([5, 0, 9], np.int64),
        change_idle=np.array([False, True, False]),
        split_index=np.array([0, 0, 1, 1], np.int32), split_tick=np.array([200, 600, 200, 400], np.int64),
        split_value=np.array([5, 9, 7, 0], np.int64), split_idle=np.array([False, False, False, True]))
    rows = driver.watermark_rows(stream, ["a", "b"]).to_pylist()
    assert [(r["replay_time"], r["scope"], r["split"], r["watermark"], r["idle"]) for r in rows] == [
        (200, "split", "a", 5, False), (200, "split", "b", 7, False), (200, "stream", None, 5, False),
        (400, "split", "b", None, True), (400, "stream", None, None, True),
        (600, "split", "a", 9, False), (600, "stream", None, 9, False)]
    assert driver.watermark_rows(StreamTimeline(no, no, no.astype(bool), no, no, no, no.astype(bool), no, no, no,
                                                no.astype(bool)), ["a"]).num_rows == 0


def _merged_by_sort(split, tick, emax, pseudo):
    """The carried groups merged by a sort of everything (what _with_pseudo_groups did before placing them)."""
    s = np.concatenate([split, np.array([p[0] for p in pseudo], np.int32)])
    t = np.concatenate([tick, np.array([p[1] for p in pseudo], np.int64)])
    m = np.concatenate([emax, np.array([p[2] for p in pseudo], np.int64)])
    order = np.lexsort((-m, t, s))
    s, t, m = s[order], t[order], m[order]
    first = np.ones(len(s), bool)
    first[1:] = (s[1:] != s[:-1]) | (t[1:] != t[:-1])
    return s[first], t[first], m[first]


@pytest.mark.parametrize("seed", range(40))
def test_carried_groups_are_placed_as_a_sort_of_everything_would(seed):
    rng = np.random.default_rng(seed)
    names = ["a", "b", "c", "d"]
    n = int(rng.integers(0, 60))
    pairs = sorted({(int(rng.integers(0, 4)), int(rng.integers(-5, 40)) * 200) for _ in range(n)})
    split = np.array([p[0] for p in pairs], np.int32)
    tick = np.array([p[1] for p in pairs], np.int64)
    emax = rng.integers(-1000, 9000, len(pairs)).astype(np.int64)
    table = TickTable(split=split, tick=tick, max_event_time=emax, row_ticks=np.unique(tick),
                             min_event_time=None, max_event_time_all=None)
    # carried groups: on existing (split, tick)s, new ones (before, between, after), twice the same, a side input
    pseudo = [(names[int(rng.integers(0, 4))], int(rng.integers(-8, 45)) * 200, int(rng.integers(-1000, 9000)))
              for _ in range(int(rng.integers(0, 12)))]
    if len(pairs):
        s0, t0 = pairs[int(rng.integers(0, len(pairs)))]
        pseudo += [(names[s0], t0, int(rng.integers(-1000, 9000))), (names[s0], t0, int(rng.integers(-1000, 9000)))]
    pseudo.append(("side", 400, 10**6))
    got = driver._with_pseudo_groups(table, pseudo, names)
    index = {s: i for i, s in enumerate(names)}
    want = _merged_by_sort(split, tick, emax, [(index[s], t, m) for s, t, m in pseudo if s in index])
    for g, w in zip((got.split, got.tick, got.max_event_time), want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(table.max_event_time, emax)  # the table itself is left as it was


def test_without_carried_groups_the_tables_arrays_are_taken_as_they_are():
    split, tick, emax = np.array([0, 1], np.int32), np.array([0, 200], np.int64), np.array([5, 6], np.int64)
    table = TickTable(split=split, tick=tick, max_event_time=emax, row_ticks=tick, min_event_time=None,
                             max_event_time_all=None)
    got = driver._with_pseudo_groups(table, [("side", 0, 1)], ["a", "b"])
    assert got.split is split and got.tick is tick and got.max_event_time is emax
