import json, sys, collections
d = json.load(open(sys.argv[1]))
cats = [("read pass (OffsetRuns/TickTimes)", "OffsetRuns"), ("walk", "FixedWalk"), ("lookup", "SortedLookup"),
        ("parquet write", "ParquetWriteSupport|ColumnWriter|parquet/hadoop|parquet/column|parquet/bytes|CapacityByteArray|FileFormatDataWriter"),
        ("sort", "UnsafeExternalSorter|UnsafeInMemorySorter|RadixSort|TimSort|UnsafeExternalRowSorter|SortExec|sort_addToSorter|PrefixComparator|SpecificOrdering.compare"),
        ("shuffle write", "ShuffleWriter|ShuffleExternalSorter|DiskBlockObjectWriter"),
        ("shuffle read", "ShuffleBlockFetcher|BlockStoreShuffleReader|UnsafeRowSerializer"),
        ("parquet read", "VectorizedParquet|VectorizedRle|ParquetFileReader|ColumnReader|ColumnarToRow|columnartorow"),
        ("arrow/python", "Arrow|PythonRDD|toArrow"),
        ("hash agg", "HashAggregate|UnsafeFixedWidthAggregationMap|BytesToBytesMap|agg_doAggregate")]
import re
c = collections.Counter(); depth = collections.Counter()
for e in d["recording"]["events"]:
    v = e["values"]; t = v["sampledThread"]["javaName"] or ""
    st = v["stackTrace"]
    if not st: continue
    names = [f["method"]["type"]["name"] + "." + f["method"]["name"] for f in st["frames"]]
    depth[st.get("truncated")] += 1
    grp = "exec" if t.startswith("Executor task") else "other:" + re.sub(r"[\d\-#]+.*$", "", t)[:20]
    hit = "unclassified"
    # innermost-first: the first category whose marker appears nearest the top
    best = None
    for i, n in enumerate(names):
        for name, pat in cats:
            if re.search(pat, n):
                best = name; break
        if best: break
    c[(grp, best or hit)] += 1
print("truncated stacks:", depth)
tot = sum(v for k, v in c.items() if k[0] == "exec")
for k, v in sorted(c.items(), key=lambda kv: -kv[1]):
    if v >= 5: print(f"{v:6d} {100*v/tot:5.1f}% {k[0]:25s} {k[1]}")
# unclassified exec: top frames and a deeper marker
u = collections.Counter()
for e in d["recording"]["events"]:
    v = e["values"]; t = v["sampledThread"]["javaName"] or ""
    st = v["stackTrace"]
    if not st or not t.startswith("Executor task"): continue
    names = [f["method"]["type"]["name"].split("/")[-1] + "." + f["method"]["name"] for f in st["frames"]]
    if any(re.search(p, n) for n in names for _, p in cats): continue
    u[" < ".join(names[:3])] += 1
for k, v in u.most_common(25): print(v, k)
