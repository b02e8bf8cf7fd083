"""Do the benchmark's modes compute the same thing? Compares the replay's windows output with the Flink job's firings.

    python bench/crosscheck.py --replay bench/out/replay-1m --flink bench/out/flink-1m [--naive bench/out/naive-1m]

Replay vs Flink: firings are matched by (key, window start, window end, fire order) - the replay's fire_index order,
Flink's line order within its key's file (one key goes to one subtask, which writes its firings in firing order) -
and every aggregate column of the job (firings.columns) must be equal: integers exactly, doubles exactly too, as the
replay sums each window's rows in (arrival_time, split, offset) order (engine/windows/fixed_walk.py) and Flink's
incremental aggregate in the order they reach the window; the largest double difference is printed anyway. The
late-row counts must be equal too (the replay's late_events vs Flink's late side output). Naive (no watermarks):
its per-window count/sum against the replay's last firing per window (sums within 1e-9 relative: another order),
to show how many windows late rows (dropped, or added by late firings) change. Prints a markdown summary; exit 1 when
a firing or the late-row count differs, or a Flink file ends mid-line (truncated: its whole lines are compared).

Memory does not grow with the log: one streaming pass per side splits the rows by a hash of the key into --buckets
Arrow files (a temporary directory, removed at exit; rows keep their order), then compares one bucket at a time. A
key lives in one bucket, so the result does not depend on the bucket count.
"""
from __future__ import annotations

import argparse
import io
import signal
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.dataset as ds

FIRING = ["key", "window_start", "window_end", "fire_order"]
WINDOW = ["key", "window_start", "window_end"]
LEGACY_COLUMNS = ["key", "window_start", "window_end", "wm", "cnt", "total", "max_value"]  # before firings.columns
CHUNK = 1 << 24


def flink_columns(path: Path) -> list[str]:
    header = path / "firings.columns"
    return header.read_text().strip().split("\t") if header.exists() else LEGACY_COLUMNS


def aggregate_columns(path: Path) -> list[str]:
    return [c for c in flink_columns(path) if c not in ("key", "window_start", "window_end", "wm")]


def _parquet(path: Path) -> ds.Dataset:
    return ds.dataset(path, format="parquet", partitioning="hive")


def _schema(*columns: tuple[str, pa.DataType]) -> pa.Schema:
    """A bucket file's columns: the key, the window bounds in epoch milliseconds, then these."""
    return pa.schema([("key", pa.string()), ("window_start", pa.int64()), ("window_end", pa.int64()), *columns])


def _ms(col: pa.Array) -> pa.Array:
    """A window bound as epoch milliseconds (timestamps of any unit and zone, or integers already)."""
    return col.cast(pa.timestamp("ms"), safe=False).cast(pa.int64()) if pa.types.is_timestamp(col.type) \
        else col.cast(pa.int64())


def bucket_of(keys: pa.Array, n: int) -> np.ndarray:
    """Each key's bucket, the same on every side and run: CRC-32 of its UTF-8 text modulo n (hashed once per key)."""
    keys = pc.dictionary_encode(pc.fill_null(keys, ""))
    of_key = np.array([zlib.crc32(k.encode()) % n for k in keys.dictionary.to_pylist()], np.int64)
    return of_key[keys.indices.to_numpy(zero_copy_only=False)]


class Buckets:
    """One side's rows, split by a hash of the key into n Arrow files under root, each in the order written."""

    def __init__(self, root: Path, side: str, schema: pa.Schema, n: int):
        self.schema, self.n, self.paths = schema, n, [root / f"{side}-{i}.arrow" for i in range(n)]
        self.rows = np.zeros(n, np.int64)
        opts = pa.ipc.IpcWriteOptions(compression="lz4")
        self._writers = [pa.ipc.new_stream(str(p), schema, options=opts) for p in self.paths]

    def write(self, batch: pa.RecordBatch) -> None:
        batch = pa.RecordBatch.from_arrays(
            [_ms(batch[f.name]) if f.name in WINDOW[1:] else batch[f.name].cast(f.type) for f in self.schema],
            schema=self.schema)
        bucket = bucket_of(batch["key"], self.n)
        grouped = batch.take(pa.array(np.argsort(bucket, kind="stable")))  # stable: rows keep their order
        counts = np.bincount(bucket, minlength=self.n)
        self.rows += counts
        starts = np.cumsum(counts) - counts
        for i in np.flatnonzero(counts):
            self._writers[i].write_batch(grouped.slice(starts[i], counts[i]))

    def close(self) -> None:
        for w in self._writers:
            w.close()

    def table(self, i: int) -> pa.Table:
        with pa.ipc.open_stream(str(self.paths[i])) as r:
            return r.read_all()


def _replay_buckets(path: Path, aggs: list[str], root: Path, n: int) -> Buckets:
    data = _parquet(path / "windows")
    missing = [c for c in aggs if c not in data.schema.names]
    if missing:
        raise SystemExit(f"the replay's windows output has no column {missing} (the Flink job computed {aggs})")
    schema = _schema(("fire_index", pa.int64()), *[(c, data.schema.field(c).type) for c in aggs])
    return _spill(data.to_batches(columns=schema.names, batch_readahead=1, fragment_readahead=1), root, "replay",
                  schema, n)


def _spill(batches, root: Path, side: str, schema: pa.Schema, n: int) -> Buckets:
    out = Buckets(root, side, schema, n)
    try:
        for b in batches:
            out.write(b)
    finally:
        out.close()
    return out


class _Upto(io.RawIOBase):
    """The first `left` bytes of a binary file: a Flink file up to its last whole line."""

    def __init__(self, f, left: int):
        self.f, self.left = f, left

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        k = self.f.readinto(memoryview(b)[:min(len(b), self.left)])
        self.left -= k
        return k


def whole_end(p: Path, truncated: list[str]) -> int:
    """Bytes up to a Flink file's last newline (found in its last 64 KiB: lines are short); names a partial last line."""
    size = p.stat().st_size
    with open(p, "rb") as f:
        f.seek(max(0, size - (1 << 16)))
        tail = f.read()
    end = size - len(tail) + tail.rfind(b"\n") + 1
    if end < size:
        truncated.append(f"{p.name} ({size - end:,} bytes after its last newline)")
    return end


def late_lines(p: Path, truncated: list[str]) -> int:
    whole_end(p, truncated)
    with open(p, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(CHUNK), b""))


def _flink_batches(path: Path, types: dict, truncated: list[str]):
    """The firings files' whole lines in file then line order, numbered by `line`."""
    line = 0
    for f in sorted(path.glob("firings-*.tsv")):
        end = whole_end(f, truncated)
        if not end:
            continue
        with open(f, "rb") as raw:
            reader = pcsv.open_csv(
                io.BufferedReader(_Upto(raw, end), CHUNK),
                read_options=pcsv.ReadOptions(column_names=flink_columns(path), block_size=CHUNK),
                parse_options=pcsv.ParseOptions(delimiter="\t", quote_char=False),  # Java's text: no quoting
                convert_options=pcsv.ConvertOptions(column_types=types, null_values=[],  # "NaN" is a double
                                                    strings_can_be_null=False))
            for b in reader:
                yield b.append_column("line", pa.array(np.arange(line, line + len(b), dtype=np.int64)))
                line += len(b)


def _flink_buckets(path: Path, replay: Buckets, root: Path, n: int, truncated: list[str]) -> Buckets:
    """Flink's firings, each aggregate read as the replay's type (integer or double)."""
    aggs = {c: pa.float64() if pa.types.is_floating(replay.schema.field(c).type) else pa.int64()
            for c in aggregate_columns(path)}
    types = {"key": pa.string(), "window_start": pa.int64(), "window_end": pa.int64(), "wm": pa.int64(), **aggs}
    schema = _schema(("line", pa.int64()), *aggs.items())
    return _spill(_flink_batches(path, types, truncated), root, "flink", schema, n)


def with_fire_order(df: pd.DataFrame, by: str) -> pd.DataFrame:
    """Each window's firings numbered 0, 1, ... in `by` order (the replay's fire_index, Flink's line)."""
    df = df.sort_values(WINDOW + [by], kind="stable", ignore_index=True)
    df["fire_order"] = df.groupby(WINDOW, sort=False).cumcount()
    return df


def compare(rp: pd.DataFrame, fl: pd.DataFrame, aggs: list[str]) -> dict:
    """Firings in one output only, firings whose aggregates differ, and per double column the largest difference."""
    ids = rp[FIRING].merge(fl[FIRING], on=FIRING, how="outer", indicator=True)["_merge"].value_counts()
    both = rp[FIRING + aggs].merge(fl[FIRING + aggs], on=FIRING, how="inner", suffixes=("_r", "_f"))
    differs = np.zeros(len(both), bool)
    largest = {}
    for c in aggs:
        r, f = both[f"{c}_r"], both[f"{c}_f"]
        if pd.api.types.is_float_dtype(r) or pd.api.types.is_float_dtype(f):
            r, f = r.astype("float64").to_numpy(), f.astype("float64").to_numpy()
            same = (r == f) | (np.isnan(r) & np.isnan(f))
            gap = np.abs(r - f)[~same]
            largest[c] = float(np.nanmax(gap)) if len(gap) else 0.0
        else:
            same = (r.astype("int64") == f.astype("int64")).to_numpy()
        differs |= ~same
    return {"replay_only": int(ids.get("left_only", 0)), "flink_only": int(ids.get("right_only", 0)),
            "values_differ": int(differs.sum()), "largest_double_difference": largest,
            "first": both[differs].head(10)}


def naive_counts(nv: pd.DataFrame, rp: pd.DataFrame) -> np.ndarray:
    """(naive windows, replay windows by their last firing, windows whose count/sum differ or exist in one only)."""
    last = rp.sort_values("fire_index").groupby(WINDOW).tail(1)
    m = nv.merge(last, on=WINDOW, how="outer", suffixes=("_naive", "_replay"), indicator=True)
    total_n, total_r = m["total_naive"].astype("float64"), m["total_replay"].astype("float64")
    same_total = np.isclose(total_n, total_r, rtol=1e-9, atol=0) if pd.api.types.is_float_dtype(
        rp["total"]) else (total_n == total_r)
    same = (m["_merge"] == "both") & (m["cnt_naive"] == m["cnt_replay"]) & same_total
    return np.array([len(nv), len(last), int((~same).sum())])


def _naive_buckets(path: str, root: Path, n: int) -> Buckets:
    data = _parquet(Path(path))
    schema = _schema(("cnt", pa.int64()), ("total", data.schema.field("total").type))
    return _spill(data.to_batches(columns=schema.names, batch_readahead=1, fragment_readahead=1), root, "naive",
                  schema, n)


def _add(acc: dict, c: dict) -> None:
    """Adds one bucket's compare() to the running totals (largest double difference: the larger)."""
    for k in ("replay_only", "flink_only", "values_differ"):
        acc[k] += c[k]
    for k, v in c["largest_double_difference"].items():
        acc["largest_double_difference"][k] = max(acc["largest_double_difference"].get(k, 0.0), v)
    firsts = [f for f in (acc["first"], c["first"]) if len(f)] or [c["first"]]
    acc["first"] = pd.concat(firsts).sort_values(FIRING, kind="stable", ignore_index=True).head(10)  # key order


def key_codes(tables: list[pa.Table]) -> tuple[list[pa.Table], np.ndarray]:
    """The tables with each key replaced by its rank among all their keys (integer joins are fast), and the keys."""
    keys = pc.unique(pa.chunked_array([t["key"] for t in tables], pa.string()))
    keys = keys.take(pc.sort_indices(keys))
    coded = [t.set_column(t.schema.get_field_index("key"), "key", pc.index_in(t["key"], value_set=keys)) for t in tables]
    return coded, keys.to_numpy(zero_copy_only=False)


def _compare_buckets(rb: Buckets, fb: Buckets, nb: Buckets | None, aggs: list[str]) -> dict:
    """compare() and naive_counts() bucket by bucket, summed; one bucket's frames in memory at a time."""
    acc = {"replay": 0, "flink": 0, "naive": np.zeros(3, np.int64), "replay_only": 0, "flink_only": 0,
           "values_differ": 0, "largest_double_difference": {}, "first": pd.DataFrame()}
    for i in np.flatnonzero(rb.rows + fb.rows + (nb.rows if nb is not None else 0)):
        tables, keys = key_codes([b.table(i) for b in (rb, fb, nb) if b is not None])
        rp, fl = with_fire_order(tables[0].to_pandas(), "fire_index"), with_fire_order(tables[1].to_pandas(), "line")
        c = compare(rp, fl, aggs)
        c["first"]["key"] = keys[c["first"]["key"].to_numpy()]
        _add(acc, c)
        acc["replay"], acc["flink"] = acc["replay"] + len(rp), acc["flink"] + len(fl)
        if nb is not None:
            acc["naive"] += naive_counts(tables[2].to_pandas(), rp)
    return acc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replay", required=True)
    ap.add_argument("--flink", required=True)
    ap.add_argument("--naive", default=None)
    ap.add_argument("--buckets", type=int, default=64, help="key buckets: more for less memory (default 64)")
    ap.add_argument("--tmp-dir", default=None, help="where the buckets are spilled (default: the system's temp dir)")
    a = ap.parse_args(argv)
    if a.buckets < 1:
        ap.error("--buckets must be at least 1")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed run still removes its spilled buckets
    replay, flink, truncated = Path(a.replay), Path(a.flink), []
    aggs = aggregate_columns(flink)
    with tempfile.TemporaryDirectory(prefix="crosscheck-", dir=a.tmp_dir) as tmp:
        rb = _replay_buckets(replay, aggs, Path(tmp), a.buckets)
        fb = _flink_buckets(flink, rb, Path(tmp), a.buckets, truncated)
        nb = _naive_buckets(a.naive, Path(tmp), a.buckets) if a.naive else None
        c = _compare_buckets(rb, fb, nb, aggs)
    n_diff = c["replay_only"] + c["flink_only"] + c["values_differ"]
    late_r = _parquet(replay / "late_events").count_rows()
    late_f = sum(late_lines(p, truncated) for p in sorted(flink.glob("late-*.tsv")))
    print(f"- replay firings: {c['replay']:,}; Flink firings: {c['flink']:,}; firings that differ (matched by key, "
          f"window and fire order; compared on {', '.join(aggs)}): {n_diff:,} (replay only {c['replay_only']:,}, "
          f"Flink only {c['flink_only']:,}, aggregates differ {c['values_differ']:,})")
    if c["largest_double_difference"]:
        gaps = ", ".join(f"{k} {v!r}" for k, v in c["largest_double_difference"].items())
        print(f"- doubles compared exactly (both sum in replay order); largest difference: {gaps}")
    print(f"- late rows: replay {late_r:,}, Flink {late_f:,}")
    if truncated:
        print(f"- Flink output truncated (a file ends mid-line; its whole lines compared): {', '.join(truncated)}")
    if a.naive:
        nv, last, differ = (int(x) for x in c["naive"])
        print(f"- naive windows: {nv:,}; replay windows (last firing): {last:,}; windows whose naive count/sum differ "
              f"from the replay's final firing or exist in one only: {differ:,}")
    if len(c["first"]):
        print("\nFirst differing firings (_r replay, _f Flink):\n")
        print(c["first"].to_markdown() if hasattr(c["first"], "to_markdown") else c["first"])
    return 0 if n_diff == 0 and late_r == late_f and not truncated else 1


if __name__ == "__main__":
    sys.exit(main())
