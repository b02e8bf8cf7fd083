"""Benchmark log generator: a large event log as a Parquet dataset, written chunk by chunk.

    python bench/generate.py --out bench/data/log-1m --rows 1000000 [--splits 32 --keys 100000 --seed 0 ...]

Each chunk covers its own slice of arrival time, so chunks come out in arrival order and only one chunk
(`--chunk-rows`, default 1M rows) is in memory at a time: 100M rows need the same memory as 1M.
Deterministic per (arguments, seed): chunk i draws from its own generator seeded with (seed, i).

Columns (same as `replay sample`): split string, offset long (0, 1, ... per split in arrival order),
arrival_time / event_time timestamp[ms, UTC], key string, value long.

Profile (all configurable):
- arrivals: uniform at `--rate` rows/s over the whole span (ties in ms possible);
- splits: uniform over `--splits` splits, except the silence profile below;
- keys: `--keys` keys, skewed (key index = floor(keys * u**skew)): hot keys get more rows, every key some;
- out-of-orderness: event time = arrival - delay, delay ~ exponential(`--mean-delay-ms`), so a few rows exceed
  a 5 s bound; `--stragglers` fraction delayed uniformly 10..120 s (late for their windows);
- silence: split 0 is silent during `--pause-s` seconds from 25% of the span (goes idle if that exceeds the idle
  timeout) and the last split stops at `--stop-at` of the span (silent until the end); their rows go to others.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_START_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z


@dataclass(frozen=True)
class Profile:
    rows: int
    splits: int = 32
    keys: int = 100_000
    seed: int = 0
    rate: float = 10_000.0  # rows per second of arrival time, all splits together
    start_ms: int = DEFAULT_START_MS
    chunk_rows: int = 1_000_000
    key_skew: float = 2.0
    mean_delay_ms: float = 800.0
    stragglers: float = 0.001
    pause_s: float = 90.0
    stop_at: float = 0.8

    @property
    def span_ms(self) -> int:
        return max(1, int(round(self.rows / self.rate * 1000)))


def _chunk_bounds(p: Profile) -> list[tuple[int, int, int, int]]:
    """(first row, rows, arrival lo, arrival hi) per chunk; arrival ranges [lo, hi) are disjoint and ascending."""
    n_chunks = max(1, -(-p.rows // p.chunk_rows))
    row_cuts = np.linspace(0, p.rows, n_chunks + 1).astype(np.int64)
    out = []
    for i in range(n_chunks):
        r0, r1 = int(row_cuts[i]), int(row_cuts[i + 1])
        # Arrival slice proportional to the rows, so the rate is the same everywhere.
        lo = p.start_ms + (p.span_ms * r0) // max(1, p.rows)
        hi = p.start_ms + (p.span_ms * r1) // max(1, p.rows)
        out.append((r0, r1 - r0, lo, max(hi, lo + 1)))
    return out


def _split_names(p: Profile) -> np.ndarray:
    width = len(str(p.splits - 1))
    return np.array([f"p{i:0{width}d}" for i in range(p.splits)], dtype=object)


def _key_names(p: Profile) -> np.ndarray:
    width = len(str(p.keys - 1))
    return np.array([f"k{i:0{width}d}" for i in range(p.keys)], dtype=object)


def generate_chunk(p: Profile, i: int, r0: int, n: int, lo: int, hi: int, next_offset: np.ndarray) -> pa.Table:
    """Chunk i; `next_offset` (per split) is advanced in place so offsets continue across chunks."""
    rng = np.random.default_rng([p.seed, i])
    arrival = np.sort(rng.integers(lo, hi, size=n, dtype=np.int64))
    split = rng.integers(0, p.splits, size=n, dtype=np.int64)
    if p.splits >= 2:
        pause_lo = p.start_ms + int(p.span_ms * 0.25)
        pause_hi = pause_lo + int(p.pause_s * 1000)
        stop = p.start_ms + int(p.span_ms * p.stop_at)
        last = p.splits - 1
        moved = ((split == 0) & (arrival >= pause_lo) & (arrival < pause_hi)) | ((split == last) & (arrival >= stop))
        # Reassigned to splits 1..last-1 (or 1 if there are only two splits): never to a silent one.
        k = int(moved.sum())
        split[moved] = rng.integers(1, max(2, last), size=k, dtype=np.int64) if p.splits > 2 else 1
    delay = rng.exponential(p.mean_delay_ms, size=n).astype(np.int64)
    late = rng.random(n) < p.stragglers
    delay[late] = rng.integers(10_000, 120_000, size=int(late.sum()), dtype=np.int64)
    event = arrival - delay
    key = (p.keys * rng.random(n) ** p.key_skew).astype(np.int64)
    np.minimum(key, p.keys - 1, out=key)
    value = rng.integers(1, 1001, size=n, dtype=np.int64)

    # Offsets: per split, consecutive in arrival order (rows are in arrival order), continuing from earlier chunks.
    order = np.argsort(split, kind="stable")
    counts = np.bincount(split, minlength=p.splits)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    offset = np.empty(n, dtype=np.int64)
    offset[order] = np.arange(n, dtype=np.int64) - np.repeat(first, counts) + np.repeat(next_offset, counts)
    next_offset += counts

    ts = pa.timestamp("ms", tz="UTC")
    # Dictionary-encoded strings: the per-chunk dictionaries are small, so building the columns is cheap.
    return pa.table({
        "split": pa.DictionaryArray.from_arrays(pa.array(split.astype(np.int32)), pa.array(_split_names(p), pa.string())
                                                ).cast(pa.string()),
        "offset": pa.array(offset, pa.int64()),
        "arrival_time": pa.array(arrival, pa.int64()).cast(ts),
        "event_time": pa.array(event, pa.int64()).cast(ts),
        "key": pa.DictionaryArray.from_arrays(pa.array(key.astype(np.int32)), pa.array(_key_names(p), pa.string())
                                              ).cast(pa.string()),
        "value": pa.array(value, pa.int64()),
    })


def write_log(out: str | Path, p: Profile, *, quiet: bool = False) -> dict:
    """Writes the dataset into `out` (replaced); returns its manifest (also written as out/_bench.json)."""
    def tables():
        next_offset = np.zeros(p.splits, dtype=np.int64)
        for i, (r0, n, lo, hi) in enumerate(_chunk_bounds(p)):
            yield generate_chunk(p, i, r0, n, lo, hi, next_offset)
    return write_chunks(out, tables(), {"profile": asdict(p)}, quiet=quiet)


def write_chunks(out: str | Path, tables, meta: dict, *, quiet: bool = False, place=None) -> dict:
    """Writes the tables (in arrival order, disjoint arrival ranges) as one Parquet file each into `out` (replaced,
    through a staging folder); returns the manifest (`meta`, rows, arrival range, seconds), also out/_bench.json.
    `place(table)`: (sub-folder, rows) pieces of a table, each written as that chunk's file in its sub-folder
    (e.g. dt= partition folders); by default the whole table in `out`."""
    out = Path(out)
    staging = out.with_name(out.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    t0 = time.monotonic()
    rows, first_arrival, last_arrival = 0, None, None
    for i, table in enumerate(tables):
        n = table.num_rows
        if n:
            arr = table.column("arrival_time").cast(pa.int64())
            a0, a1 = arr[0].as_py(), arr[-1].as_py()
            first_arrival = a0 if first_arrival is None else first_arrival
            last_arrival = a1
        for folder, piece in (place(table) if place else [("", table)]):
            (staging / folder).mkdir(parents=True, exist_ok=True)
            pq.write_table(piece, staging / folder / f"part-{i:05d}.parquet", row_group_size=256 * 1024)
        rows += n
        del table
        if not quiet:
            print(f"generate: chunk {i}: {rows} rows ({time.monotonic() - t0:.1f} s)", file=sys.stderr, flush=True)
    manifest = {**meta, "rows": rows, "first_arrival_ms": first_arrival, "last_arrival_ms": last_arrival,
                "seconds": round(time.monotonic() - t0, 2)}
    # Underscore prefix: Spark's file listing ignores it, so the dataset stays a plain Parquet directory.
    (staging / "_bench.json").write_text(json.dumps(manifest, indent=1))
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    return manifest


def log_arguments(description: str, d) -> argparse.ArgumentParser:
    """The options every log generator takes (--out, --rows and the profile's splits, keys, seed, chunk rows)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--splits", type=int, default=d.splits)
    ap.add_argument("--keys", type=int, default=d.keys)
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--chunk-rows", type=int, default=d.chunk_rows)
    return ap


def main(argv=None) -> int:
    d = Profile(rows=0)
    ap = log_arguments(__doc__.split("\n")[0], d)
    ap.add_argument("--rate", type=float, default=d.rate, help="rows per second of arrival time")
    ap.add_argument("--key-skew", type=float, default=d.key_skew)
    ap.add_argument("--mean-delay-ms", type=float, default=d.mean_delay_ms)
    ap.add_argument("--stragglers", type=float, default=d.stragglers)
    ap.add_argument("--pause-s", type=float, default=d.pause_s)
    ap.add_argument("--stop-at", type=float, default=d.stop_at)
    a = ap.parse_args(argv)
    if a.rows < 1 or a.splits < 1 or a.keys < 1 or a.rate <= 0 or a.chunk_rows < 1:
        ap.error("need rows, splits, keys, rate, chunk-rows > 0")
    p = Profile(rows=a.rows, splits=a.splits, keys=a.keys, seed=a.seed, rate=a.rate, chunk_rows=a.chunk_rows,
                key_skew=a.key_skew, mean_delay_ms=a.mean_delay_ms, stragglers=a.stragglers, pause_s=a.pause_s,
                stop_at=a.stop_at)
    m = write_log(a.out, p)
    print(f"generate: {m['rows']} rows -> {a.out} ({m['seconds']} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
