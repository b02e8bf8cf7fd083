import json, time, urllib.request
from pyspark.sql import SparkSession, functions as F
spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "4g")
         .config("spark.ui.port", "4079").getOrCreate())
w = spark.read.parquet("/work/scratch/ab/out3/ab-new-10m/windows")
el = w.select("key", F.unix_millis("window_start").alias("ws"), F.unix_millis("window_end").alias("we"), "fire_index", "cnt")
el = el.orderBy(F.rand(7)).localCheckpoint()  # random order, as the hash aggregate gives
print(el.count(), el.select(F.countDistinct("ws")).first()[0])
app = spark.sparkContext.applicationId
def cpu():
    with urllib.request.urlopen(f"http://localhost:4079/api/v1/applications/{app}/stages") as r:
        return {s["stageId"]: s["executorCpuTime"] / 1e9 for s in json.load(r)}
kb = F.conv(F.hex(F.substring(F.col("key"), 1, 4)), 16, 10).cast("long")
variants = {"key_first": ["key", "ws", "we", "fire_index"], "ws_first": ["ws", "key", "we", "fire_index"],
            "composite_first": [(F.floor(F.col("ws") / 10000) * F.lit(1 << 32) + kb), "ws", "key", "we", "fire_index"],
            "none": None}
for rep in range(3):
    for name, order in variants.items():
        b = cpu(); t = time.time()
        p = el.repartition(8, "key")
        if order: p = p.sortWithinPartitions(*order)
        p.write.format("noop").mode("overwrite").save()
        a = cpu(); new = {k: round(v, 2) for k, v in a.items() if k not in b}
        print(rep, name, f"wall {time.time()-t:.1f}", new, flush=True)
