"""KeyWalk.java (with SessionWalk.Rules and SessionWalk.Session): one key's session windows walked row by row in
replay order: merging, event-time timers, late firings, cleanup and late rows, as Flink's MergingWindowSet."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark

MIN, MAX = -2 ** 63, 2 ** 63 - 1
NO_WM = MIN  # no watermark yet


def _walk(java, rows, gap=10, lateness=0):
    """rows: (event time, stream watermark before the row). The walk after finish()."""
    walk = java.new("KeyWalk", java.new("SessionWalk$Rules", gap, lateness, "pending", "late_row"))
    for i, (t, wm) in enumerate(rows):
        java.call(walk, "add", i, t, wm)
    java.call(walk, "finish")
    return walk


def _fired(java, walk) -> list[tuple]:
    """Per fired window, in the order it first fired: (start, end, creator row, rows, {size: firing})."""
    out = []
    for s in java.field(walk, "fired"):
        firings = java.field(s, "firings")  # size -> firing: keys and values listed in the map's one order
        sizes = java.jvm.java.util.ArrayList(firings.keySet())
        values = java.jvm.java.util.ArrayList(java.call(firings, "values"))  # (py4j's JavaMap.values is Python's)
        firings = {size: (java.call(f, "index"), java.call(f, "reason"), java.call(f, "watermark"))
                   for size, f in zip(sizes, values)}
        out.append((java.field(s, "start"), java.field(s, "end"), java.field(s, "creator"),
                    list(java.call(s, "rows")), firings))
    return out


def _late(java, walk) -> list[tuple[int, int]]:
    return [(r[0], r[1]) for r in java.field(walk, "late")]


def test_no_rows_nothing_fires(java):
    walk = _walk(java, [])
    assert _fired(java, walk) == [] and _late(java, walk) == []


def test_one_row_opens_a_gap_long_window_whose_timer_fires_at_the_end(java):
    walk = _walk(java, [(5, NO_WM)])
    assert _fired(java, walk) == [(5, 15, 0, [0], {1: (0, "pending", None)})]


def test_windows_that_touch_merge_and_ones_a_gap_apart_do_not(java):
    touching = _walk(java, [(0, NO_WM), (10, NO_WM)])  # [0, 10) and [10, 20) touch
    assert _fired(java, touching) == [(0, 20, 1, [0, 1], {2: (0, "pending", None)})]
    apart = _walk(java, [(0, NO_WM), (11, NO_WM)])
    assert [w[:4] for w in _fired(java, apart)] == [(0, 10, 0, [0]), (11, 21, 1, [1])]


def test_a_row_bridging_two_windows_merges_them_with_their_rows_by_start_first(java):
    walk = _walk(java, [(20, NO_WM), (0, NO_WM), (10, NO_WM)])
    assert [w[:4] for w in _fired(java, walk)] == [(0, 30, 2, [1, 0, 2])]


def test_a_row_inside_a_window_keeps_it(java):
    walk = _walk(java, [(0, NO_WM), (3, NO_WM)])  # [3, 13) is not inside [0, 10): merged to [0, 13)
    assert [w[:4] for w in _fired(java, walk)] == [(0, 13, 1, [0, 1])]
    walk = _walk(java, [(0, NO_WM), (13, NO_WM), (0, NO_WM)])  # [0, 10) lands on the first window itself
    assert [w[:4] for w in _fired(java, walk)] == [(0, 10, 0, [0, 2]), (13, 23, 1, [1])]


@pytest.mark.parametrize("wm, firings", [
    (8, {2: (0, "pending", None)}),  # not yet: row 2 joins the window before its timer fires
    (9, {1: (0, "pending", None), 2: (1, "late_row", 9)}),  # fired at 9: row 2 fires it again at once
])
def test_the_timer_fires_when_the_watermark_reaches_the_max_timestamp(java, wm, firings):
    walk = _walk(java, [(0, NO_WM), (100, wm), (0, wm)], lateness=100)
    fired = _fired(java, walk)
    assert fired[0] == (0, 10, 0, [0, 2], firings)
    assert [w[:4] for w in fired[1:]] == [(100, 110, 1, [1])]
    assert _late(java, walk) == []


def test_a_row_in_a_window_the_watermark_passed_fires_it_at_once_within_lateness(java):
    walk = _walk(java, [(0, NO_WM), (0, 9)], lateness=5)
    assert _fired(java, walk) == [(0, 10, 0, [0, 1], {1: (0, "pending", None), 2: (1, "late_row", 9)})]


@pytest.mark.parametrize("lateness, wm, late", [(0, 9, True), (5, 13, False), (5, 14, True)])
def test_a_row_whose_window_is_past_cleanup_is_a_late_row(java, lateness, wm, late):
    """Cleanup at the max timestamp plus the lateness: at that watermark the window is gone."""
    walk = _walk(java, [(0, NO_WM), (0, wm)], lateness=lateness)
    assert _late(java, walk) == ([(1, wm)] if late else [])
    assert _fired(java, walk)[0][3] == ([0] if late else [0, 1])


def test_a_late_row_opens_no_window_and_a_later_one_does(java):
    walk = _walk(java, [(0, 20), (25, 20)])
    assert _late(java, walk) == [(0, 20)]
    assert [w[:4] for w in _fired(java, walk)] == [(25, 35, 1, [1])]


def test_the_timer_of_a_window_merged_away_never_fires(java):
    walk = _walk(java, [(0, NO_WM), (5, NO_WM), (100, 9)])  # [0, 10) became [0, 15) before its timer at 9
    assert [w[:4] for w in _fired(java, walk)] == [(0, 15, 1, [0, 1]), (100, 110, 2, [2])]
    assert _fired(java, walk)[0][4] == {2: (0, "pending", None)}


def test_a_window_fires_again_for_each_late_row_and_once_per_size(java):
    walk = _walk(java, [(0, NO_WM), (1, NO_WM), (0, 10), (0, 10)], lateness=100)
    [(start, end, creator, rows, firings)] = _fired(java, walk)
    assert (start, end, creator, rows) == (0, 11, 1, [0, 1, 2, 3])  # [1, 11) merged [0, 10) into [0, 11)
    assert firings == {2: (0, "pending", None), 3: (1, "late_row", 10), 4: (2, "late_row", 10)}


def test_window_ends_and_cleanup_saturate_at_the_long_range(java):
    rules = java.new("SessionWalk$Rules", 10, MAX, "p", "l")
    assert java.call(rules, "cleanup", MAX) == MAX
    assert java.call(rules, "cleanup", 0) == MAX - 1
    assert java.call("SessionWalk$Rules", "saturatedAdd", MAX - 1, 10) == MAX
    assert java.call("SessionWalk$Rules", "saturatedAdd", MIN + 1, -10) == MIN
    assert java.call("SessionWalk$Rules", "saturatedAdd", 5, -10) == -5
    walk = _walk(java, [(MAX - 3, NO_WM)], gap=10)
    assert [w[:2] for w in _fired(java, walk)] == [(MAX - 3, MAX)]
