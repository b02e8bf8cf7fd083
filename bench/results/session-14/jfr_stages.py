"""Executor samples of a JFR recording (jfr print --json --stack-depth 200 --events jdk.ExecutionSample) by the
stage they belong to, told by a marker anywhere in the stack, with each group's top two frames; and the samples
under FileFormatWriter by what they do. Session 14: `python jfr_stages.py now.json`."""
import collections
import json
import sys

d = json.load(open(sys.argv[1]))


def stage(s: str) -> str:
    for marker, name in (("FixedWalk", "windows reduce (walk)"), ("OffsetRuns", "read pass"), ("TickTimes", "read pass"),
                         ("SortedLookup", "lookup (map side)"), ("FileFormatWriter", "write (other)"),
                         ("ShuffleMapTask", "shuffle map (other)"), ("ResultTask", "result (other)")):
        if marker in s:
            return name
    return "?"


def writing(s: str, names: list) -> str:
    if "Dictionary" in s or "2IntLinkedOpenHashMap" in s or "2IntOpenHashMap" in s:
        return "dictionary encoding"
    if "FixedWalk" in s:
        return "walk/sort feeding the write"
    if "UnsafeExternalRowSorter" in s or "UnsafeExternalSorter" in s:
        return "sort feeding the write"
    if "ParquetWriteSupport" in s or "parquet" in s.lower():
        return "parquet other"
    return "other: " + " < ".join(names[:2])


groups, inner, writes = collections.Counter(), collections.defaultdict(collections.Counter), collections.Counter()
for e in d["recording"]["events"]:
    v = e["values"]
    st = v["stackTrace"]
    if not st or not (v["sampledThread"]["javaName"] or "").startswith("Executor"):
        continue
    names = [f["method"]["type"]["name"].split("/")[-1] + "." + f["method"]["name"] for f in st["frames"]]
    s = " ".join(names)
    g = stage(s)
    groups[g] += 1
    inner[g][" < ".join(names[:2])] += 1
    if "FileFormatWriter" in s:
        writes[writing(s, names)] += 1
total = sum(groups.values())
for g, n in groups.most_common():
    print(f"{n:5d} {100 * n / total:5.1f}% {g}")
    for k, c in inner[g].most_common(6):
        print(f"        {c:4d} {k}")
print("samples under FileFormatWriter:")
for k, n in writes.most_common(12):
    print(f"{n:5d} {k}")
