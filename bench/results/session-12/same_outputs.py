"""Two replay outputs the same? Per folder, the Parquet part files in part-number order: bytes equal, else the
tables read by pyarrow equal. Prints the folders compared and any that differ."""
import hashlib, re, sys
from pathlib import Path
import pyarrow.parquet as pq
a, b = Path(sys.argv[1]), Path(sys.argv[2])
def parts(folder):
    return sorted((p for p in folder.iterdir() if p.name.startswith("part-")), key=lambda p: int(re.match(r"part-(\d+)", p.name).group(1)))
def digest(p):
    return hashlib.md5(p.read_bytes()).hexdigest()
folders = sorted({p.parent.relative_to(a) for p in a.rglob("part-*") if not any(s.startswith("_") for s in p.relative_to(a).parts[:-1])})
differ, by_bytes, by_table = [], 0, 0
for rel in folders:
    fa, fb = parts(a / rel), parts(b / rel)
    if len(fa) != len(fb):
        differ.append((rel, "file count")); continue
    if all(digest(x) == digest(y) for x, y in zip(fa, fb)):
        by_bytes += 1; continue
    ta = [pq.read_table(x) for x in fa]; tb = [pq.read_table(y) for y in fb]
    if all(x.equals(y) for x, y in zip(ta, tb)):
        by_table += 1
    else:
        differ.append((rel, "rows"))
print(f"{len(folders)} folders: {by_bytes} byte-equal, {by_table} equal as tables, {len(differ)} differ")
for rel, why in differ[:20]:
    print("  differs:", rel, why)
sys.exit(1 if differ else 0)
