"""Executor samples by stage and by what the innermost recognisable frame does."""
import collections, json, sys
d = json.load(open(sys.argv[1]))
ev = d["recording"]["events"]
def frames(e):
    return [f["method"]["type"]["name"] + "." + f["method"]["name"] for f in e["values"]["stackTrace"]["frames"]]
CATS = [("SortedLookup", "lookup udf"), ("FireLookup", "lookup udf"), ("ScalaUDF", "udf other"),
        ("Dictionary", "parquet dict"), ("IntLinkedOpenHashMap", "parquet dict"), ("IntOpenHashMap", "parquet dict"),
        ("org.apache.parquet.column", "parquet write cols"), ("ParquetWriteSupport", "parquet write support"),
        ("VectorizedParquetRecordReader", "parquet read"), ("VectorizedColumnReader", "parquet read"), ("VectorizedRleValuesReader","parquet read"),("parquet.hadoop.ParquetFileReader","parquet read"),("ParquetReadSupport", "parquet read"),
        ("UnsafeExternalSorter", "sort"), ("UnsafeInMemorySorter", "sort"), ("RadixSort", "sort"), ("UnsafeSorterSpill", "sort spill"),
        ("BytesToBytesMap", "hash agg map"), ("UnsafeFixedWidthAggregationMap", "hash agg map"), ("HashAggregate", "hash agg"),
        ("HashedRelation", "hash join"), ("ShuffleBlockFetcher", "shuffle read"), ("UnsafeRowSerializer", "shuffle read/ser"),
        ("ShuffleExternalSorter", "shuffle write"), ("UnsafeShuffleWriter", "shuffle write"), ("BypassMergeSort", "shuffle write"),
        ("ZstdOutputStream","compress"),("Lz4", "compress"), ("lz4", "compress"), ("Snappy", "compress"), ("snappy", "compress"), ("zstd", "compress"),
        ("OffsetRuns", "read pass"), ("TickTimes", "read pass"), ("FixedWalk", "walk"),
        ("MemoryStore", "block store"), ("DiskStore", "block store"), ("ColumnarBatch", "columnar"),
        ("WindowExec", "window"), ("GenerateExec", "generate"), ("GeneratedClass", "generated code"),
        ]
def cat(fs):
    for f in fs:
        for m, c in CATS:
            if m in f:
                return c
    return "other: " + " < ".join(fs[:3])
def stage(fs):
    s = " ".join(fs)
    if "OffsetRuns" in s or "TickTimes" in s: return "read pass"
    if "localCheckpoint" in s or "LocalCheckpoint" in s or "BlockManager.doPutIterator" in s: return "checkpoint"
    if "ShuffleMapTask" in s: return "shuffle map"
    if "FileFormatWriter" in s: return "write"
    if "ResultTask" in s: return "result"
    return "?"
by_thread = collections.Counter(); by = collections.defaultdict(collections.Counter)
for e in ev:
    t = e["values"]["sampledThread"]["javaName"] or "?"
    t = "".join(c for c in t if not c.isdigit())
    by_thread[t] += 1
    if not t.startswith("Executor task"): continue
    fs = frames(e)
    by[stage(fs)][cat(fs)] += 1
print(by_thread.most_common(12))
for s, c in sorted(by.items(), key=lambda x: -sum(x[1].values())):
    print(f"== {s}: {sum(c.values())}")
    for k, n in c.most_common(14): print(f"   {n:6d} {k}")
