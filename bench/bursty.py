"""The "bursty" benchmark log: traffic shaped like a real one, where the replay does the most work.

    python bench/bursty.py --out bench/data/bursty-3m --rows 3000000 [--splits 8 --keys 1000 --seed 0]

Per split, arrivals follow their own clock: gaps exponential with mean 150 ms (about 6.7 rows/s; `--gap-ms`), 3% of them
replaced by pauses of 1.5-6 s (long enough for a 1.5 s idle timeout: the split goes idle and comes back, over and
over).
Event time = arrival - a delay: exponential with mean 100 ms, except 5% stragglers 2-12 s behind (late rows and late
firings under a 10 s window with 1 s lateness). `value` is a double with 2 decimals. Keys k000.. skewed (index =
keys * u**1.5), and `--hot-key-share` of the rows on k000. The config (bench/configs/bursty.yaml) declares one split more than the log has
(`p<splits>`): a declared split with no rows, which holds the stream until it is idle.

3M rows over 8 splits span about 27 hours. Written in chunks of arrival time (each split's clock carried across
chunks), one chunk in memory at a time; deterministic per (arguments, seed). Same columns as bench/generate.py.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from generate import DEFAULT_START_MS, log_arguments, write_chunks

MEAN_GAP_MS = 150.0
PAUSE_SHARE, PAUSE_MS = 0.03, (1_500, 6_000)
MEAN_DELAY_MS = 100.0
STRAGGLER_SHARE, STRAGGLER_MS = 0.05, (2_000, 12_000)
KEY_SKEW = 1.5


@dataclass(frozen=True)
class BurstyProfile:
    rows: int
    splits: int = 8
    keys: int = 1_000
    seed: int = 0
    start_ms: int = DEFAULT_START_MS
    chunk_rows: int = 1_000_000
    gap_ms: float = MEAN_GAP_MS  # a split's mean gap between rows outside pauses (sparse traffic: larger)
    hot_key_share: float = 0.0  # the share of rows of key k000 (a hot key), the rest as usual
    int_values: bool = False  # value in cents as a long (the same rows otherwise): doubles against integers

    @property
    def mean_gap_ms(self) -> float:
        return (1 - PAUSE_SHARE) * self.gap_ms + PAUSE_SHARE * sum(PAUSE_MS) / 2

    @property
    def span_ms(self) -> int:
        """Arrival span that holds about `rows` rows over all splits."""
        return max(1, int(self.rows / self.splits * self.mean_gap_ms))


def _split_arrivals(rng: np.random.Generator, clock: int, hi: int, gap_ms: float) -> np.ndarray:
    """One split's arrivals in (clock, hi): gap after gap from `clock`, its last arrival before the chunk."""
    out = []
    while True:
        n = max(16, int((hi - clock) / gap_ms * 1.1))
        gaps = rng.exponential(gap_ms, size=n)
        pause = rng.random(n) < PAUSE_SHARE
        gaps[pause] = rng.uniform(*PAUSE_MS, size=int(pause.sum()))
        arrivals = clock + np.cumsum(np.maximum(gaps, 1.0)).astype(np.int64)
        inside = arrivals[arrivals < hi]
        out.append(inside)
        if len(inside) < n:
            return np.concatenate(out)
        clock = int(inside[-1])


def bursty_chunk(p: BurstyProfile, i: int, lo: int, hi: int, clocks: np.ndarray,
                 next_offset: np.ndarray) -> pa.Table:
    """The rows arriving in [lo, hi), in arrival order; `clocks` and `next_offset` (per split) advance in place."""
    rng = np.random.default_rng([p.seed, i])
    per_split = []
    for s in range(p.splits):
        a = _split_arrivals(rng, int(clocks[s]), hi, p.gap_ms)
        if len(a):
            clocks[s] = a[-1]
        per_split.append(a)
    split = np.repeat(np.arange(p.splits), [len(a) for a in per_split])
    arrival = np.concatenate(per_split)
    offset = np.concatenate([next_offset[s] + np.arange(len(a)) for s, a in enumerate(per_split)])
    next_offset += [len(a) for a in per_split]
    order = np.lexsort((offset, split, arrival))
    split, arrival, offset = split[order], arrival[order], offset[order]
    n = len(arrival)
    delay = rng.exponential(MEAN_DELAY_MS, size=n).astype(np.int64)
    straggler = rng.random(n) < STRAGGLER_SHARE
    delay[straggler] = rng.integers(*STRAGGLER_MS, size=int(straggler.sum()), dtype=np.int64)
    key = np.minimum((p.keys * rng.random(n) ** KEY_SKEW).astype(np.int64), p.keys - 1)
    if p.hot_key_share:
        key[rng.random(n) < p.hot_key_share] = 0
    value = np.round(rng.uniform(0, 1000, size=n), 2)
    ts = pa.timestamp("ms", tz="UTC")
    return pa.table({
        "split": _names("p", p.splits).take(pa.array(split.astype(np.int32))),
        "offset": pa.array(offset, pa.int64()),
        "arrival_time": pa.array(arrival, pa.int64()).cast(ts),
        "event_time": pa.array(arrival - delay, pa.int64()).cast(ts),
        "key": _names("k", p.keys).take(pa.array(key.astype(np.int32))),
        "value": pa.array(np.round(value * 100).astype(np.int64)) if p.int_values else pa.array(value, pa.float64()),
    })


def _names(prefix: str, n: int) -> pa.Array:
    width = len(str(max(n - 1, 0)))
    return pa.array([f"{prefix}{i:0{width}d}" for i in range(n)], pa.string())


def chunks(p: BurstyProfile):
    """(chunk index, table) in arrival order, each over an equal slice of the span."""
    n_chunks = max(1, -(-p.rows // p.chunk_rows))
    cuts = p.start_ms + (np.arange(n_chunks + 1, dtype=np.int64) * p.span_ms) // n_chunks
    clocks = np.full(p.splits, p.start_ms - 1, dtype=np.int64)
    next_offset = np.zeros(p.splits, dtype=np.int64)
    for i in range(n_chunks):
        yield bursty_chunk(p, i, int(cuts[i]), int(cuts[i + 1]), clocks, next_offset)


def main(argv=None) -> int:
    d = BurstyProfile(rows=0)
    ap = log_arguments(__doc__.split("\n")[0], d)
    ap.add_argument("--gap-ms", type=float, default=d.gap_ms, help="a split's mean gap outside pauses")
    ap.add_argument("--hot-key-share", type=float, default=d.hot_key_share, help="share of rows of key k000")
    ap.add_argument("--int-values", action="store_true", help="value in cents as a long instead of a double")
    a = ap.parse_args(argv)
    if a.rows < 1 or a.splits < 1 or a.keys < 1 or a.chunk_rows < 1 or a.gap_ms <= 0 or not 0 <= a.hot_key_share < 1:
        ap.error("need rows, splits, keys, chunk-rows, gap-ms > 0 and 0 <= hot-key-share < 1")
    p = BurstyProfile(rows=a.rows, splits=a.splits, keys=a.keys, seed=a.seed, chunk_rows=a.chunk_rows,
                      gap_ms=a.gap_ms, hot_key_share=a.hot_key_share, int_values=a.int_values)
    m = write_chunks(a.out, chunks(p), {"shape": "bursty", **p.__dict__})
    print(f"bursty: {m['rows']} rows -> {a.out} ({m['seconds']} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
