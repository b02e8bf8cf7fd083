"""The stream watermark from the splits' changes (SEMANTICS §4), in numpy.

At each tick where some split changes, the stream's candidate is the minimum over the active splits' values;
with every split idle it is the largest value any split published (the stream goes idle), or +inf when a side
input is declared (a side input counts +inf and is never idle). The stream watermark is the running maximum of
the candidates (it never goes back), never below its initial value.

Each split's (value, idle) is forward-filled onto the change ticks one split at a time (a binary search per
tick), so memory stays O(change ticks) whatever the number of splits.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..contract import NEG_INF, POS_INF
from .sorted_arrays import distinct_sorted
from .split_changes import SplitChanges


@dataclass
class StreamTimeline:
    tick: np.ndarray  # the change ticks (every tick where some split changes, and the first tick)
    watermark: np.ndarray  # the stream watermark after each of them
    idle: np.ndarray  # whether the stream is idle after each of them
    values: np.ndarray  # every value the stream moved to, ascending
    change_tick: np.ndarray  # the stream's own changes of (watermark, idle)
    change_value: np.ndarray
    change_idle: np.ndarray
    split_index: np.ndarray  # the splits' changes inside the range
    split_tick: np.ndarray
    split_value: np.ndarray
    split_idle: np.ndarray


def combine_splits(changes: SplitChanges, n_splits: int, first_tick: int, last_tick: int, has_side: bool,
                   initial: int, prev0: int, prev_idle0: bool) -> StreamTimeline:
    """The stream over ticks first_tick..last_tick, continuing from (prev0, prev_idle0)."""
    inside = (changes.tick >= first_tick) & (changes.tick <= last_tick)
    ticks = distinct_sorted(np.append(changes.tick[inside], first_tick))
    n_active = np.zeros(len(ticks), np.int64)
    min_active = np.full(len(ticks), POS_INF, np.int64)
    max_all = np.full(len(ticks), NEG_INF, np.int64)
    bounds = np.searchsorted(changes.split, np.arange(n_splits + 1), side="left")
    for i in range(n_splits):
        t, v, idle = _seeded(changes, bounds[i], bounds[i + 1], first_tick, last_tick)
        at = np.searchsorted(t, ticks, side="right") - 1
        known = at >= 0
        value = np.where(known, v[np.maximum(at, 0)] if len(v) else NEG_INF, NEG_INF)
        is_idle = known & (idle[np.maximum(at, 0)] if len(idle) else False)
        n_active += ~is_idle
        min_active = np.where(is_idle, min_active, np.minimum(min_active, value))
        max_all = np.maximum(max_all, value)
    all_idle = np.full(len(ticks), POS_INF, np.int64) if has_side else max_all
    candidate = np.where(n_active > 0, min_active, all_idle)
    stream_idle = (n_active == 0) & (not has_side)
    watermark = np.maximum(np.maximum.accumulate(candidate), initial)
    prev_w = np.concatenate([[prev0], watermark[:-1]])
    prev_idle = np.concatenate([[prev_idle0], stream_idle[:-1]])
    moved = (watermark != prev_w) | (stream_idle != prev_idle)
    return StreamTimeline(
        tick=ticks, watermark=watermark, idle=stream_idle, values=distinct_sorted(watermark[watermark > prev_w]),
        change_tick=ticks[moved], change_value=watermark[moved], change_idle=stream_idle[moved],
        split_index=changes.split[inside], split_tick=changes.tick[inside], split_value=changes.value[inside],
        split_idle=changes.idle[inside])


def _seeded(changes: SplitChanges, lo: int, hi: int, first_tick: int, last_tick: int):
    """One split's changes inside the range, preceded by its state before the range (its last earlier change,
    moved to the first tick unless it changes there anyway)."""
    t, v, idle = changes.tick[lo:hi], changes.value[lo:hi], changes.idle[lo:hi]
    earlier = np.flatnonzero(t < first_tick)
    inside = (t >= first_tick) & (t <= last_tick)
    t_in, v_in, idle_in = t[inside], v[inside], idle[inside]
    if len(earlier) and not (len(t_in) and t_in[0] == first_tick):
        j = earlier[-1]
        t_in = np.concatenate([[first_tick], t_in])
        v_in = np.concatenate([[v[j]], v_in])
        idle_in = np.concatenate([[idle[j]], idle_in])
    return t_in, v_in, idle_in
