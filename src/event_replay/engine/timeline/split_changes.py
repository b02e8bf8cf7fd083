"""Each split's watermark changes under periodic emission, from its row groups (SEMANTICS §2–3), in numpy.

A split's rows are summarised as groups: per tick with rows, the largest event time published there. Between
two groups nothing happens but time passing, so every change of the split's (watermark, idle) pair follows in
closed form from the group and the number of ticks until the next one:

    max_ts after group i     M_i = max(M_{i-1}, E_i), or with silence advance (the split's max_ts grows by one
                             interval per active silent tick once it has been silent longer than the wait)
                             the max-plus recurrence M_i = max(M_{i-1} + adv_{i-1}, E_i), whose closed form is
                             M_i = A_i + max_{j<=i}(E_j - A_j) with A_i the advances before group i;
    published at its tick    M_i - lag (one interval more when the first silent tick already advances);
    silence ramp             at the k-th active tick after it, M_i + k*I - lag, for every such tick;
    idle                     a split with rows at tick t is active at t and t + I, then idle at the first tick
                             more than the idle timeout after t + I: at t + (1 + D)*I, D = timeout // I + 1;
    before its first row     a split idle from origin + D*I (the history's first tick counts as "no rows since").

The changes are the events where the (value, idle) pair differs from the one before, starting from (-inf, not
idle). It is the same arithmetic as the Spark path (`periodic_changes.py`), one split at a time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...semantics.watermark_config import WatermarkConfig
from ..contract import NEG_INF


@dataclass
class SplitGroups:
    """Row groups sorted by (split, tick): one per (split, tick with rows)."""
    split: np.ndarray  # int32 index of the split
    tick: np.ndarray  # int64
    max_event_time: np.ndarray  # int64


@dataclass
class SplitChanges:
    """Every split's changes up to the last tick, sorted by (split, tick); and per group its max_ts after it."""
    split: np.ndarray
    tick: np.ndarray
    value: np.ndarray  # the published watermark; while idle, the last one published
    idle: np.ndarray
    max_ts_after: np.ndarray  # aligned with the groups


@dataclass(frozen=True)
class _Rules:
    interval: int
    lag: int
    span: int | None  # active ticks from a group's tick before idleness (None: never idle)
    idle_after_origin: int | None  # when a split without rows goes idle
    silence_k0: int | None  # the first silent tick that advances (None: no silence advance)


def _rules(wmc: WatermarkConfig, origin: int) -> _Rules:
    interval = wmc.interval_ms
    d_ticks = wmc.idle_timeout_ms // interval + 1 if wmc.idle_timeout_ms is not None else None
    k0 = wmc.advance_after_silence_ms // interval + 1 if wmc.advance_after_silence_ms is not None else None
    return _Rules(interval=interval, lag=wmc.lag_ms, span=None if d_ticks is None else 1 + d_ticks,
                  idle_after_origin=None if d_ticks is None else origin + d_ticks * interval, silence_k0=k0)


def split_changes(groups: SplitGroups, wmc: WatermarkConfig, n_splits: int, end_bound: int,
                  origin: int) -> SplitChanges:
    """The changes of splits 0..n_splits-1 at ticks before `end_bound` (the tick after the range)."""
    rules = _rules(wmc, origin)
    bounds = np.searchsorted(groups.split, np.arange(n_splits + 1), side="left")
    parts, max_ts = [], np.empty(len(groups.tick), np.int64)
    for i in range(n_splits):
        lo, hi = bounds[i], bounds[i + 1]
        t, e = groups.tick[lo:hi], groups.max_event_time[lo:hi]
        tick, value, idle, m = _one_split(t, e, end_bound, rules)
        max_ts[lo:hi] = m
        keep = tick < end_bound
        parts.append((np.full(int(keep.sum()), i, np.int32), tick[keep], value[keep], idle[keep]))
    cat = (lambda k, dt: np.concatenate([p[k] for p in parts]).astype(dt, copy=False)) if parts else \
        (lambda k, dt: np.empty(0, dt))
    return SplitChanges(split=cat(0, np.int32), tick=cat(1, np.int64), value=cat(2, np.int64),
                        idle=cat(3, bool), max_ts_after=max_ts)


def _one_split(t: np.ndarray, e: np.ndarray, end_bound: int, r: _Rules):
    """(tick, value, idle) of one split's changes, and its max_ts after each group."""
    next_t = np.append(t[1:], end_bound)
    n_ticks = (next_t - t) // r.interval
    n_act = np.minimum(n_ticks, r.span) if r.span is not None else n_ticks
    if r.silence_k0 is not None:
        advancing = n_act >= r.silence_k0
        adv = np.where(advancing, n_act * r.interval, 0)
        before = np.concatenate([[0], np.cumsum(adv)[:-1]]).astype(np.int64)
        m = before + np.maximum.accumulate(e - before) if len(e) else e
        last_pub = np.where(advancing, m + n_act * r.interval - r.lag, m - r.lag)
        first_value = m - r.lag + (r.interval if r.silence_k0 == 1 else 0)
    else:
        m = np.maximum.accumulate(e) if len(e) else e
        last_pub = m - r.lag
        first_value = m - r.lag
    events = [(t, first_value, np.zeros(len(t), bool))]
    if r.silence_k0 is not None:
        events.append(_silence_ramp(t, m, n_act, max(r.silence_k0, 2), r))
    if r.span is not None:
        goes_idle = n_ticks > r.span
        events.append((t[goes_idle] + r.span * r.interval, last_pub[goes_idle], np.ones(int(goes_idle.sum()), bool)))
        if len(t) == 0 or t[0] > r.idle_after_origin:
            events.append((np.array([r.idle_after_origin]), np.array([NEG_INF]), np.array([True])))
    tick = np.concatenate([ev[0] for ev in events]).astype(np.int64)
    value = np.concatenate([ev[1] for ev in events]).astype(np.int64)
    idle = np.concatenate([ev[2] for ev in events]).astype(bool)
    order = np.argsort(tick, kind="stable")
    tick, value, idle = tick[order], value[order], idle[order]
    prev_value = np.concatenate([[NEG_INF], value[:-1]])
    prev_idle = np.concatenate([[False], idle[:-1]])
    change = (value != prev_value) | (idle != prev_idle)
    return tick[change], value[change], idle[change], m


def _silence_ramp(t, m, n_act, kstart: int, r: _Rules):
    """One event per active silent tick k = kstart..n_act after each group: (t + (k-1)*I, M + k*I - lag)."""
    counts = np.maximum(n_act - kstart + 1, 0)
    total = int(counts.sum())
    group = np.repeat(np.arange(len(t)), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    k = kstart + (np.arange(total) - first)
    return (t[group] + (k - 1) * r.interval, m[group] + k * r.interval - r.lag, np.zeros(total, bool))
