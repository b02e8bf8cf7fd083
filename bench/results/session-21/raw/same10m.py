"""10M: compare/ of the old tree against the new: summary.json (but timings, paths, phases), differences.csv and
partitions.csv byte for byte, windows/ as multisets of rows (every column), and each new file sorted by
(partition, window_end_ms, key, window_start_ms)."""
import json, sys
from pathlib import Path
import pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq

def summary(p):
    s = json.loads((p / "summary.json").read_text())
    for k in ("seconds", "phases_s", "seconds_total", "out_dir", "page"):
        s.pop(k, None)
    return json.dumps(s, sort_keys=True).replace(str(p), "X")

ORDER = ["partition", "window_end_ms", "key", "window_start_ms"]
def windows(p, check_sorted):
    files = sorted((p / "windows").glob("part-*.parquet"))
    tables, ok = [], True
    for f in files:
        t = pq.read_table(f)
        if check_sorted and t.num_rows:
            idx = pc.sort_indices(t, sort_keys=[(c, "ascending") for c in ORDER])
            ok &= pc.all(pc.equal(idx, pa.array(range(t.num_rows), type=idx.type))).as_py()
        tables.append(t)
    t = pa.concat_tables(tables)
    t = t.take(pc.sort_indices(t, sort_keys=[(c, "ascending") for c in ["key", "window_start_ms", "window_end_ms"]]))
    return t, ok, [x.num_rows for x in tables]

old, new = Path(sys.argv[1]), Path(sys.argv[2])
checks = {"summary.json": summary(old) == summary(new)}
for f in ("differences.csv", "partitions.csv"):
    checks[f] = (old / f).read_bytes() == (new / f).read_bytes()
checks["partitions.parquet"] = pq.read_table(old / "partitions.parquet").equals(pq.read_table(new / "partitions.parquet"))
(wo, _, fo), (wn, sorted_new, fn) = windows(old, False), windows(new, True)
checks[f"windows/ as sets ({wo.num_rows} rows; files {fo} -> {fn})"] = wo.equals(wn)
checks["windows/ new: each file sorted by " + ", ".join(ORDER)] = sorted_new
print(old.name, new.name, checks)
print("SAME" if all(checks.values()) else "DIFFERENT")
