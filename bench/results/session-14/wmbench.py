import json, time, urllib.request, resource, os
import pyarrow.parquet as pq, pyarrow as pa, numpy as np
from pyspark.sql import SparkSession, functions as F
src = "/tmp/out-bursty-10m/watermarks"
spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "4g")
         .config("spark.ui.port", "4078").getOrCreate())
# driver-like input: the scratch table (engine columns, ms), in the driver's order (split part then stream part)
t = pq.read_table(src).select(["replay_time_ms", "scope", "split", "watermark_ms", "idle"])
t = t.rename_columns(["replay_time", "scope", "split", "watermark", "idle"])
order = np.lexsort((t.column("replay_time").to_numpy(), t.column("split").to_numpy(zero_copy_only=False).astype(str) if False else np.zeros(t.num_rows), (t.column("scope").to_numpy(zero_copy_only=False) == "stream")))
t = t.take(pa.array(order))
pq.write_table(t, "/tmp/wm-scratch.parquet")
print(t.num_rows)
app = spark.sparkContext.applicationId
def stage_cpu():
    with urllib.request.urlopen(f"http://localhost:4078/api/v1/applications/{app}/stages") as r:
        return sum(s["executorCpuTime"] / 1e9 for s in json.load(r))
def shaped(df):
    ts = lambda c: F.timestamp_millis(c)
    return df.select(ts("replay_time").alias("replay_time"), "scope", "split", ts("watermark").alias("watermark"), "idle",
                     F.col("watermark").alias("watermark_ms"), F.col("replay_time").alias("replay_time_ms"))
order_cols = [F.col("replay_time_ms"), F.col("scope"), F.col("split").asc_nulls_first(), F.col("idle"), F.col("watermark_ms").asc_nulls_last()]
def spark_repart():
    shaped(spark.read.parquet("/tmp/wm-scratch.parquet")).repartition(1).sortWithinPartitions(*order_cols).write.mode("overwrite").parquet("/tmp/wm-out-a")
def spark_coalesce():
    shaped(spark.read.parquet("/tmp/wm-scratch.parquet")).coalesce(1).sortWithinPartitions(*order_cols).write.mode("overwrite").parquet("/tmp/wm-out-b")
def spark_nosort():
    shaped(spark.read.parquet("/tmp/wm-scratch.parquet")).coalesce(1).write.mode("overwrite").parquet("/tmp/wm-out-c")
def arrow():
    tt = pq.read_table("/tmp/wm-scratch.parquet")
    rt = tt.column("replay_time").to_numpy()
    sc = (tt.column("scope").to_numpy(zero_copy_only=False) == "stream")
    o = np.lexsort((sc, rt))
    tt = tt.take(pa.array(o))
    pq.write_table(tt, "/tmp/wm-out-d.parquet")
for rep in range(3):
    for f in (spark_repart, spark_coalesce, spark_nosort, arrow):
        c0 = stage_cpu(); r0 = resource.getrusage(resource.RUSAGE_SELF); w = time.time()
        f()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        print(rep, f.__name__, f"wall {time.time()-w:.1f} exec {stage_cpu()-c0:.2f} py {r1.ru_utime+r1.ru_stime-r0.ru_utime-r0.ru_stime:.2f}", flush=True)
