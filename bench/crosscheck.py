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
    """One side's rows (batches), split by a hash of the key into n Arrow files under root, each in the given order."""

    def __init__(self, root: Path, side: str, schema: pa.Schema, n: int, batches):
        self.schema, self.n, self.paths = schema, n, [root / f"{side}-{i}.arrow" for i in range(n)]
        self.rows = np.zeros(n, np.int64)
        opts = pa.ipc.IpcWriteOptions(compression="lz4")
        self._writers = [pa.ipc.new_stream(str(p), schema, options=opts) for p in self.paths]
        try:
            for b in batches:
                self._write(b)
        finally:
            for w in self._writers:
                w.close()

    def _write(self, batch: pa.RecordBatch | pa.Table) -> None:
        batch = pa.table(  # the schema's columns, window bounds in epoch milliseconds
            [_ms(batch[f.name]) if f.name in WINDOW[1:] else batch[f.name].cast(f.type) for f in self.schema],
            schema=self.schema)
        bucket = bucket_of(batch["key"].combine_chunks(), self.n)
        grouped = batch.take(pa.array(np.argsort(bucket, kind="stable")))  # stable: rows keep their order
        counts = np.bincount(bucket, minlength=self.n)
        self.rows += counts
        starts = np.cumsum(counts) - counts
        for i in np.flatnonzero(counts):
            self._writers[i].write_table(grouped.slice(starts[i], counts[i]))

    def table(self, i: int) -> pa.Table:
        with pa.ipc.open_stream(str(self.paths[i])) as r:
            return r.read_all()


def _replay_buckets(path: Path, aggs: list[str], root: Path, n: int) -> Buckets:
    data = _parquet(path / "windows")
    missing = [c for c in aggs if c not in data.schema.names]
    if missing:
        raise SystemExit(f"the replay's windows output has no column {missing} (the Flink job computed {aggs})")
    schema = _schema(("fire_index", pa.int64()), *[(c, data.schema.field(c).type) for c in aggs])
    return Buckets(root, "replay", schema, n, data.to_batches(columns=schema.names, batch_readahead=1,
                                                              fragment_readahead=1))


def whole_lines(p: Path, truncated: list[str]):
    """A Flink file's whole lines, CHUNK bytes or so at a time; a partial last line is not read but named in truncated."""
    rest = b""
    with open(p, "rb") as f:
        while chunk := f.read(CHUNK):
            chunk = rest + chunk
            cut = chunk.rfind(b"\n") + 1
            rest = chunk[cut:]
            if cut:
                yield chunk[:cut]
    if rest:
        truncated.append(f"{p.name} ({len(rest):,} bytes after its last newline)")


def _flink_batches(path: Path, types: dict, truncated: list[str]):
    """The firings files' whole lines in file then line order, numbered by `line`."""
    line = 0
    for f in sorted(path.glob("firings-*.tsv")):
        for lines in whole_lines(f, truncated):
            table = pcsv.read_csv(
                pa.py_buffer(lines), read_options=pcsv.ReadOptions(column_names=flink_columns(path)),
                parse_options=pcsv.ParseOptions(delimiter="\t", quote_char=False),  # Java's text: no quoting
                convert_options=pcsv.ConvertOptions(column_types=types, null_values=[],  # "NaN" is a double
                                                    strings_can_be_null=False))
            yield table.append_column("line", pa.array(np.arange(line, line + len(table), dtype=np.int64)))
            line += len(table)


def _flink_buckets(path: Path, replay: Buckets, root: Path, n: int, truncated: list[str]) -> Buckets:
    """Flink's firings, each aggregate read as the replay's type (integer or double)."""
    aggs = {c: pa.float64() if pa.types.is_floating(replay.schema.field(c).type) else pa.int64()
            for c in aggregate_columns(path)}
    types = {"key": pa.string(), "window_start": pa.int64(), "window_end": pa.int64(), "wm": pa.int64(), **aggs}
    schema = _schema(("line", pa.int64()), *aggs.items())
    return Buckets(root, "flink", schema, n, _flink_batches(path, types, truncated))


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
    return Buckets(root, "naive", schema, n, data.to_batches(columns=schema.names, batch_readahead=1,
                                                             fragment_readahead=1))


def key_codes(tables: list[pa.Table]) -> tuple[list[pa.Table], np.ndarray]:
    """The tables with each key replaced by its rank among all their keys (integer joins are fast), and the keys."""
    keys = pc.unique(pa.chunked_array([t["key"] for t in tables], pa.string()))
    keys = keys.take(pc.sort_indices(keys))
    codes = [t.set_column(t.schema.get_field_index("key"), "key", pc.index_in(t["key"], value_set=keys)) for t in tables]
    return codes, keys.to_numpy(zero_copy_only=False)


def _compare_buckets(rb: Buckets, fb: Buckets, nb: Buckets | None, aggs: list[str]) -> dict:
    """compare() and naive_counts() bucket by bucket, summed; one bucket's frames in memory at a time."""
    acc = dict.fromkeys(["replay", "flink", "replay_only", "flink_only", "values_differ"], 0)
    acc |= {"naive": np.zeros(3, np.int64), "largest_double_difference": {}, "first": []}
    for i in np.flatnonzero(rb.rows + fb.rows + (nb.rows if nb is not None else 0)):
        tables, keys = key_codes([b.table(i) for b in (rb, fb, nb) if b is not None])
        rp, fl = with_fire_order(tables[0].to_pandas(), "fire_index"), with_fire_order(tables[1].to_pandas(), "line")
        c = compare(rp, fl, aggs) | {"replay": len(rp), "flink": len(fl)}
        for k in ("replay", "flink", "replay_only", "flink_only", "values_differ"):
            acc[k] += c[k]
        for k, v in c["largest_double_difference"].items():
            acc["largest_double_difference"][k] = max(acc["largest_double_difference"].get(k, 0.0), v)
        acc["first"].append(c["first"].assign(key=keys[c["first"]["key"].to_numpy()]))  # 10 a bucket at most
        if nb is not None:
            acc["naive"] += naive_counts(tables[2].to_pandas(), rp)
    firsts = [f for f in acc["first"] if len(f)]
    acc["first"] = pd.concat(firsts).sort_values(FIRING, ignore_index=True).head(10) if firsts else pd.DataFrame()
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
    late_f = sum(lines.count(b"\n") for p in sorted(flink.glob("late-*.tsv")) for lines in whole_lines(p, truncated))
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
    # jemalloc returns freed batches to the OS; the default (mimalloc) kept ~1 GB per 1M spilled rows at 100M.
    pa.jemalloc_set_decay_ms(0)
    pa.set_memory_pool(pa.jemalloc_memory_pool())
    sys.exit(main())
