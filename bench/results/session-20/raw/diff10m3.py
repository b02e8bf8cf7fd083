"""The windows/ Parquet of two compare/ folders as one sequence of rows (part files in name order), column by column."""
import sys
from pathlib import Path
import pyarrow as pa, pyarrow.parquet as pq
old, new = Path(sys.argv[1]), Path(sys.argv[2])
po, pn = sorted((old / "windows").glob("part-*.parquet")), sorted((new / "windows").glob("part-*.parquet"))
cols = pq.read_schema(po[0]).names
same = []
for c in cols:
    a = pa.concat_arrays([pq.read_table(f, columns=[c])[c].combine_chunks() for f in po])
    b = pa.concat_arrays([pq.read_table(f, columns=[c])[c].combine_chunks() for f in pn])
    same.append((c, a.equals(b)))
print(len(a), "rows;", "all columns equal" if all(s for _, s in same) else [c for c, s in same if not s])
