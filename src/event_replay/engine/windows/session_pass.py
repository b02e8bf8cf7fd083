"""The session windows' sequential pass: each key's rows in replay order, merged as Flink's MergingWindowSet
merges them (docs/semantics.md, "Windows").

A row opens [t, t + gap) and merges with every live window it overlaps or touches; the merged window keeps the
rows of the windows it swallowed first, then its own, so every firing holds a prefix of its rows. Before each
row, the timers its `wm_before` passed fire (their stream value is looked up later: `PENDING`) and windows past
their cleanup time are dropped. A row whose (merged) window is already past cleanup is a late row; one that lands
in a window whose max timestamp the watermark has passed fires it at once (`late_row`). Keys are walked in
buckets (one pandas call per bucket), each key O(n log n) (a heap of timers, a sorted list of live windows).

The module is pickled by value (cloudpickle), so executors need not import this package.
"""
from __future__ import annotations

import heapq
import sys
from bisect import bisect_right

import numpy as np
import pandas as pd
from pyspark import cloudpickle
from pyspark.sql import types as T

from ...semantics.model import FIRE_LATE_ROW
from ..contract import POS_INF
from ..elements import ORDER, PENDING, POS, WE, WS

WID_SPLIT, WID_OFFSET = "__wid_split", "__wid_offset"  # a session window's id: the row that created it

SESSION_OUT = T.StructType([
    T.StructField("kind", T.StringType()),  # m = element, l = late row (fire_watermark = late watermark)
    T.StructField(WID_SPLIT, T.StringType()), T.StructField(WID_OFFSET, T.LongType()),
    T.StructField(WS, T.LongType()), T.StructField(WE, T.LongType()),
    T.StructField("split", T.StringType()), T.StructField("offset", T.LongType()),
    T.StructField(POS, T.LongType()), T.StructField("fire_index", T.LongType()),
    T.StructField("fire_reason", T.StringType()), T.StructField("fire_watermark", T.LongType()),
])


class Session:
    """A session window in the pass: `children` are the windows it swallowed (their rows come first)."""
    __slots__ = ("start", "end", "creator", "children", "own", "size", "fired", "pending", "alive", "firings")

    def __init__(self, start: int, end: int, creator: int, children: list["Session"]):
        self.start, self.end, self.creator, self.children = start, end, creator, children
        self.own: list[int] = []  # row indices added while the window had these bounds, in replay order
        self.size = sum(c.size for c in children)
        self.fired = 0  # firings so far: the next fire_index
        self.pending = False  # an event-time timer at end - 1 is registered and has not fired
        self.alive = True
        self.firings: dict[int, tuple] = {}  # size at the firing -> (fire_index, reason, watermark)

    def rows(self) -> list[int]:
        """The rows in membership order: swallowed windows' rows (recursively), then its own. Each firing holds
        a prefix of it. Iterative: merge chains can be long."""
        out: list[int] = []
        stack: list[object] = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, Session):
                stack.append(item.own)
                stack.extend(reversed(item.children))
            else:
                out.extend(item)  # type: ignore[arg-type]
        return out


class KeyWalk:
    """One key's walk: live windows (sorted by start; disjoint and not touching, so by end too), the timer heap
    (stale entries skipped), the windows that fired and the late rows."""

    def __init__(self, gap: int, lateness: int):
        self.gap, self.lateness = gap, lateness
        self.active: list[Session] = []
        self.starts: list[int] = []
        self.timers: list[tuple[int, int, Session]] = []  # (max timestamp, creator, window)
        self.fired: list[Session] = []
        self.late: list[tuple[int, int]] = []

    def cleanup(self, end: int) -> int:
        return min(end - 1 + self.lateness, POS_INF)

    def fire(self, win: Session, reason: str, wm: int | None) -> None:
        if win.fired == 0:
            self.fired.append(win)
        win.firings[win.size] = (win.fired, reason, wm)  # sizes only grow: one firing per size
        win.fired += 1

    def advance(self, wm: int) -> None:
        """The watermark moved to at least wm: due timers fire (at a stream value looked up later), then windows
        past their cleanup time are dropped (a prefix, ends being sorted)."""
        while self.timers and self.timers[0][0] <= wm:
            _, _, win = heapq.heappop(self.timers)
            if win.alive and win.pending:
                win.pending = False
                self.fire(win, PENDING, None)
        n_gone = 0
        while n_gone < len(self.active) and self.cleanup(self.active[n_gone].end) <= wm:
            self.active[n_gone].alive = False
            n_gone += 1
        if n_gone:
            del self.active[:n_gone], self.starts[:n_gone]

    def add(self, i: int, t: int, wm: int) -> None:
        """Row i (event time t, watermark before it wm): merged into its window, or a late row."""
        self.advance(wm)
        win = self._window_for(i, t, wm)
        if win is None:
            self.late.append((i, wm))  # the (merged) window is late: retired, the row dropped
            return
        win.own.append(i)
        win.size += 1
        if win.end - 1 <= wm:
            self.fire(win, FIRE_LATE_ROW, wm)  # a late firing with everything the window holds
        elif not win.pending:
            win.pending = True
            heapq.heappush(self.timers, (win.end - 1, win.creator, win))

    def _window_for(self, i: int, t: int, wm: int) -> Session | None:
        """Merge [t, t + gap) with every live window it overlaps or touches (Flink's TimeWindow.intersects); a
        grown window can only reach windows the new one reaches itself, so one scan suffices."""
        w_lo, w_hi = t, t + self.gap
        j = bisect_right(self.starts, w_hi)
        k = j
        while k > 0 and self.active[k - 1].end >= w_lo:
            k -= 1
        swallowed = self.active[k:j]
        if len(swallowed) == 1 and swallowed[0].start <= w_lo and swallowed[0].end >= w_hi:
            return swallowed[0]  # lands inside an existing window: same bounds, same window
        start = min([w_lo] + [s.start for s in swallowed])
        end = max([w_hi] + [s.end for s in swallowed])
        if self.cleanup(end) <= wm:
            return None
        win = Session(start, end, i, swallowed)
        for s in swallowed:
            s.alive = False  # merged away: its timers are deleted, it never fires again
        self.active[k:j] = [win]
        self.starts[k:j] = [start]
        return win

    def finish(self, splits: list, offsets: list, out: list) -> None:
        """Timers still registered at the end fire (looked up, or flushed, or held); then the elements and late
        rows go to `out`."""
        for win in self.active:
            if win.pending:
                win.pending = False
                self.fire(win, PENDING, None)
        for win in self.fired:
            wid = (splits[win.creator], offsets[win.creator])
            for pos, r in enumerate(win.rows(), start=1):
                out.append(("m", *wid, win.start, win.end, splits[r], offsets[r], pos,
                            *win.firings.get(pos, (None, None, None))))
        for r, wm in self.late:
            out.append(("l", None, None, None, None, splits[r], offsets[r], None, None, None, wm))


def session_pass(gap: int, lateness: int):
    """The function applyInPandas runs on a bucket of keys."""

    def run(pdf: pd.DataFrame) -> pd.DataFrame:
        # Sort here: applyInPandas gives no order guarantee, and the walk must follow replay order.
        pdf = pdf.sort_values(["key", *ORDER], kind="mergesort").reset_index(drop=True)
        keys = pdf["key"].to_numpy()
        cuts = [0, *(np.flatnonzero(keys[1:] != keys[:-1]) + 1).tolist(), len(keys)] if len(keys) else [0]
        ev, wms = pdf["event_time"].to_numpy().tolist(), pdf["wm_before"].to_numpy().tolist()
        splits, offsets = pdf["split"].tolist(), pdf["offset"].to_numpy().tolist()
        out: list[tuple] = []
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            walk = KeyWalk(gap, lateness)
            for i in range(lo, hi):
                walk.add(i, ev[i], wms[i])
            walk.finish(splits, offsets, out)
        return _frame(out)

    return run


def _frame(out: list[tuple]) -> pd.DataFrame:
    """Column by column from Python ints: a frame built from rows would infer float64 for a column with nulls and
    round large longs (such as -inf). Int64 is nullable, so None stays null through Arrow."""
    columns = list(zip(*out)) if out else [()] * len(SESSION_OUT.fields)
    return pd.DataFrame({
        f.name: pd.array(list(col), dtype="Int64" if isinstance(f.dataType, T.LongType) else object)
        for f, col in zip(SESSION_OUT.fields, columns)})


cloudpickle.register_pickle_by_value(sys.modules[__name__])
