"""Turns a bench log (generate.py's or bursty.py's Parquet dataset) into the Flink bench job's input, file by file.

    python bench/flink/prepare.py --config JOB.yaml --out DIR    -> DIR/events.bin, DIR/events.properties

events.bin: the rows of the replay range in replay order (arrival, split, offset) with the periodic tick markers
interleaved exactly as tests/flink/flink_harness.py does it (a tick T after every row with arrival <= T, ticks at
multiples of the interval with start <= T < end), as fixed-size big-endian records (see BenchFormat.java). `value`
keeps the log's type: a long for an integer column, a double (its IEEE bits) for a floating-point one.
events.properties: the job's settings, the splits (declared ones without rows included, sorted, as the harness's
`declared_splits_of`), the value type and the config's aggregates (count, sum, min, max over `value`, in order).
One Parquet file is in memory at a time, with the rows of earlier files that arrive after the next file's first
(stragglers across a generator's cut). No explicit replay range: start = first arrival, end = last arrival (the
replay's own default).
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from event_replay.semantics.config import JobConfig, load_config  # noqa: E402

KEY_BYTES = 16
FORMAT_VERSION = 2  # 2: value as the log's type (long or double), the config's aggregates in events.properties
VALUE_DTYPES = {"long": ">i8", "double": ">f8"}
AGGREGATE = re.compile(r"^(count|sum|min|max)\s*\(\s*(\*|value)\s*\)$", re.I)
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def record_dtype(value_type: str) -> np.dtype:
    """One record: a row or a tick; `value` is 8 bytes either way (BenchFormat reads the bits, the type says which)."""
    rec = np.dtype([("kind", "i1"), ("split", ">i4"), ("offset", ">i8"), ("arrival", ">i8"), ("event", ">i8"),
                    ("value", VALUE_DTYPES[value_type]), ("key_len", "u1"), ("key", f"S{KEY_BYTES}")])
    assert rec.itemsize == 1 + 4 + 8 * 4 + 1 + KEY_BYTES
    return rec


def value_type_of(field: pa.Field) -> str:
    """The Java type a Flink job would give the `value` column: long for integers, double for floating point."""
    if pa.types.is_integer(field.type):
        return "long"
    if pa.types.is_floating(field.type):
        return "double"
    raise ValueError(f"bench/flink/prepare.py handles integer or floating-point values, not {field.type}")


def aggregates_of(cfg: JobConfig) -> str:
    """The config's aggregates as `name:op,...` (op: count, sum, min, max over `value`), in the config's order."""
    out = []
    for name, expr in cfg.aggregations.items():
        m = AGGREGATE.match(expr.strip())
        if m is None or not NAME.match(name) or (m.group(2) == "*" and m.group(1).lower() != "count"):
            raise ValueError(f"bench/flink/prepare.py handles count(*), count/sum/min/max(value) only, not "
                             f"{name}: {expr!r}")
        out.append(f"{name}:{m.group(1).lower()}")
    return ",".join(out)


def _opt(v) -> str:
    return "-" if v is None else str(int(v))


def properties(cfg: JobConfig, n_splits: int, value_type: str) -> str:
    wm, win = cfg.watermark, cfg.window
    conf = {"strategy": wm.strategy, "delay": _opt(wm.max_out_of_orderness_ms), "emit": wm.emit,
            "interval": _opt(wm.interval_ms), "idle": _opt(wm.idle_timeout_ms),
            "silence": _opt(wm.advance_after_silence_ms), "window": win.type, "size": _opt(win.size_ms),
            "slide": _opt(win.slide_ms), "offset": _opt(win.offset_ms), "gap": _opt(win.gap_ms),
            "lateness": _opt(win.allowed_lateness_ms), "eoi": cfg.replay.end_of_input, "splits": str(n_splits),
            "value": value_type, "aggregates": aggregates_of(cfg)}
    return "".join(f"{k}={v}\n" for k, v in conf.items())


def _read(file: Path, cols: dict, index: dict, value_type: str) -> dict[str, np.ndarray]:
    """One file's rows as numpy columns (split as its index in the sorted splits)."""
    t = pq.read_table(file, columns=[cols[c] for c in ("split", "offset", "arrival_time", "event_time", "key")]
                      + ["value"])
    enc = t.column(0).combine_chunks().dictionary_encode()
    keys = t.column(4).to_numpy(zero_copy_only=False).astype(f"S{KEY_BYTES + 1}")
    if (np.char.str_len(keys) > KEY_BYTES).any():
        raise ValueError(f"keys longer than {KEY_BYTES} bytes are not supported by the bench format")
    if t.column(5).null_count:
        raise ValueError(f"{file.name}: null values are not supported by the bench format")
    if value_type_of(t.schema.field(5)) != value_type:
        raise ValueError(f"{file.name}: `value` is {t.schema.field(5).type}, not {value_type}")
    ms = lambda c: t.column(c).cast(pa.timestamp("ms", tz="UTC")).cast(pa.int64()).to_numpy()  # noqa: E731
    return {"split": np.array([index[s] for s in enc.dictionary.to_pylist()], np.int32)[enc.indices.to_numpy()],
            "offset": t.column(1).to_numpy(), "arrival": ms(2), "event": ms(3), "key": keys,
            "value": t.column(5).to_numpy()}


def prepare(cfg: JobConfig, out: Path) -> dict:
    if cfg.replay.start_ms is not None or cfg.replay.end_ms is not None:
        raise ValueError("bench/flink/prepare.py handles the default replay range only (no replay.start/end)")
    if cfg.window.time != "event" or cfg.source.side_inputs:
        raise ValueError("bench/flink/prepare.py handles event time without side inputs only")
    cols = cfg.source.columns
    files = sorted(Path(cfg.source.path).glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"no Parquet files in {cfg.source.path}")
    splits = sorted(set(cfg.source.splits or ()) | set().union(
        *(set(pq.read_table(f, columns=[cols["split"]]).column(0).unique().to_pylist()) for f in files)))
    index = {s: i for i, s in enumerate(splits)}  # declared splits without rows too: they hold the stream until idle
    value_type = value_type_of(pq.read_schema(files[0]).field("value"))
    record = record_dtype(value_type)
    metas = []
    for f in files:  # arrival range per file from a cheap read of one column
        a = pq.read_table(f, columns=[cols["arrival_time"]]).column(0).cast(pa.timestamp("ms", tz="UTC")).cast(pa.int64())
        metas.append((int(pa.compute.min(a).as_py()), int(pa.compute.max(a).as_py())))
    # Files in order of their first arrival, merged as they come: after file k, the rows that arrive before the next
    # file's first arrival are final (no later file holds an earlier one); the rest (stragglers across a cut) wait
    # with the next file. One file and the stragglers are in memory at a time, whatever the log's length.
    order = sorted(range(len(files)), key=lambda i: metas[i])
    files, metas = [files[i] for i in order], [metas[i] for i in order]
    start, end = metas[0][0], max(hi for _, hi in metas)
    interval = cfg.watermark.interval_ms if cfg.watermark.periodic else 0
    next_tick = -(-start // interval) * interval if interval else None

    out.mkdir(parents=True, exist_ok=True)
    (out / "events.properties").write_text(properties(cfg, len(splits), value_type))
    n_rows = n_ticks = 0
    t0 = time.monotonic()
    waiting: dict[str, np.ndarray] | None = None
    with open(out / "events.bin", "wb") as fh:
        for k, f in enumerate(files):
            rows = _read(f, cols, index, value_type)
            if waiting is not None:
                rows = {c: np.concatenate([waiting[c], rows[c]]) for c in rows}
            sort = np.lexsort((rows["offset"], rows["split"], rows["arrival"]))  # replay order
            rows = {c: v[sort] for c, v in rows.items()}
            limit = metas[k + 1][0] if k + 1 < len(files) else end  # ticks before the next file's first row
            final = int(np.searchsorted(rows["arrival"], limit, side="left")) if k + 1 < len(files) else len(sort)
            waiting = {c: v[final:] for c, v in rows.items()}
            rows = {c: v[:final] for c, v in rows.items()}
            ticks = np.arange(next_tick, limit, interval, dtype=np.int64) if interval and next_tick < limit else \
                np.empty(0, np.int64)
            if interval:
                next_tick = int(ticks[-1]) + interval if len(ticks) else next_tick
            pos = np.searchsorted(rows["arrival"], ticks, side="right")  # a tick comes after rows with arrival <= T
            n = final
            rec = np.zeros(n + len(ticks), record)
            row_at = np.arange(n) + np.searchsorted(pos, np.arange(n), side="right")
            tick_at = pos + np.arange(len(ticks))
            rec["kind"][tick_at] = 1
            rec["arrival"][tick_at] = ticks
            r = rec[row_at]
            for c in ("split", "offset", "arrival", "event", "value", "key"):
                r[c] = rows[c]
            r["key_len"] = np.char.str_len(rows["key"])
            rec[row_at] = r
            rec.tofile(fh)
            n_rows += n
            n_ticks += len(ticks)
            del rows, rec, r
    return {"rows": n_rows, "ticks": n_ticks, "splits": len(splits), "value": value_type, "start": start, "end": end,
            "seconds": round(time.monotonic() - t0, 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    info = prepare(load_config(a.config), Path(a.out))
    print(f"prepare: {info}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
