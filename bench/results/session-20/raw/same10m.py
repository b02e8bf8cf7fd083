"""compare/ of the 10M comparison: the previous code's (standalone) vs this branch's (in report_steps)."""
import json, sys
from pathlib import Path
import pyarrow.parquet as pq
old, new = Path(sys.argv[1]), Path(sys.argv[2])
def summary(p):
    s = json.loads((p / "summary.json").read_text())
    for k in ("seconds", "phases_s", "seconds_total", "out_dir", "page", "output_path"):
        s.pop(k, None)
    return json.dumps(s, sort_keys=True).replace(str(p), "X")
print("summary.json", summary(old) == summary(new))
for f in ("differences.csv", "partitions.csv"):
    print(f, (old / f).read_bytes() == (new / f).read_bytes())
po, pn = sorted((old / "windows").glob("part-*.parquet")), sorted((new / "windows").glob("part-*.parquet"))
print("windows files", len(po), len(pn), all(pq.read_table(a).equals(pq.read_table(b)) for a, b in zip(po, pn)),
      sum(pq.ParquetFile(a).metadata.num_rows for a in po))
