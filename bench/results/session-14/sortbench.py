import json, sys, time, urllib.request
from pyspark.sql import SparkSession, functions as F
spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "4g")
         .config("spark.ui.port", "4077").getOrCreate())
df = spark.read.parquet("/work/bench-data/bursty-10m")
print(df.schema.simpleString())
et = F.col("event_time").cast("long") if dict(df.dtypes)["event_time"] != "timestamp" else F.unix_millis("event_time")
el = df.select("key", (et - et % 10000).alias("__ws"), "arrival_time", "split", "offset", "value")
el = el.withColumn("__we", F.col("__ws") + 10000)
el = el.localCheckpoint()
el.count()
app = spark.sparkContext.applicationId
def stage_cpu():
    with urllib.request.urlopen(f"http://localhost:4077/api/v1/applications/{app}/stages") as r:
        return {s["stageId"]: s["executorCpuTime"] / 1e9 for s in json.load(r)}
# The micro-sort file's three runs: `sortbench.py` (key_first, hash_first, none), `sortbench.py single`
# (ws_only_radix, hash_only_radix, key_only, key_first, hash_first, none), `sortbench.py ws` (ws_first first).
variants = {
 "ws_only_radix": ["__ws"],
 "hash_only_radix": [F.xxhash64("key", "__ws")],
 "key_only": ["key"],
 "ws_first": ["__ws", "key", "__we", "arrival_time", "split", "offset"],
 "key_first": ["key", "__ws", "__we", "arrival_time", "split", "offset"],
 "hash_first": [F.xxhash64("key", "__ws"), "key", "__ws", "__we", "arrival_time", "split", "offset"],
 "none": None,
}
which = sys.argv[1] if len(sys.argv) > 1 else ""
skip = {"": {"ws_only_radix", "hash_only_radix", "key_only", "ws_first"}, "single": {"ws_first"},
        "ws": {"ws_only_radix", "hash_only_radix", "key_only"}}[which]
variants = {k: v for k, v in variants.items() if k not in skip}
for rep in range(3 if which == "" else 2):
    for name, order in variants.items():
        before = stage_cpu()
        t = time.time()
        parts = el.repartition(8, "key")
        if order is not None:
            parts = parts.sortWithinPartitions(*order)
        parts.write.format("noop").mode("overwrite").save()
        after = stage_cpu()
        new = {k: v for k, v in after.items() if k not in before}
        print(rep, name, f"wall {time.time()-t:.1f}", {k: round(v, 2) for k, v in sorted(new.items())}, flush=True)
