"""compare/ of the old code vs the new: summary.json (but timings and paths), every CSV byte for byte, partitions
parquet and windows/ Parquet row for row (part files in name order)."""
import json, sys
from pathlib import Path
import pyarrow.parquet as pq

def summary(p):
    s = json.loads((p / "summary.json").read_text())
    for k in ("seconds", "phases_s", "seconds_total", "out_dir", "page"):
        s.pop(k, None)
    return json.dumps(s, sort_keys=True).replace(str(p), "X")

def windows(p):
    parts = sorted((p / "windows").glob("part-*.parquet"))
    return [pq.read_table(f).to_pylist() for f in parts]

ok = True
for name in sys.argv[1:]:
    old, new = Path(f"/tmp/t46e/demo/{name}-old"), Path(f"/tmp/t46e/demo/{name}-new")
    checks = {"summary.json": summary(old) == summary(new)}
    for f in sorted(x.name for x in old.iterdir() if x.suffix in (".csv",)):
        checks[f] = (old / f).read_bytes() == (new / f).read_bytes()
    checks["partitions.parquet"] = pq.read_table(next(old.glob("*.parquet"))).equals(pq.read_table(next(new.glob("*.parquet"))))
    w_old, w_new = windows(old), windows(new)
    checks[f"windows/ ({sum(map(len, w_old))} rows in {len(w_old)} files)"] = w_old == w_new
    print(name, checks)
    ok &= all(checks.values())
print("SAME" if ok else "DIFFERENT")
