"""Experiment: the windows output's aggregate, as written today vs pre-partitioned by key
(bench/results/SESSIONS.md, "What would still be gained").

    python bench/experiments/windows_aggregate.py [--log bench/data/log-10m] [--files 8] [--reps 3]

Today the tumbling firings are a groupBy(key, window) (map-side partial aggregation, then a shuffle) and io/output.py
then repartitions them by key into `output.windows_files` files: two shuffles, and at 100k keys x 10 s windows the
partial aggregation barely reduces (10M rows -> 5.6M groups). The variant shuffles the rows once, by the same hash of
the key into the same number of partitions, and aggregates inside them: file i then holds the same firings as
before. Both run in this process on the same checkpointed rows, interleaved; the script prints the median of each,
their ratio, and checks that the two outputs are equal file by file. A measurement, not an engine change: the engine
would also have to keep that partitioning through its late-window union and joins.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", default=str(ROOT / "bench/data/log-10m"))
    ap.add_argument("--out", default="/tmp/windows-aggregate-experiment")
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--size-ms", type=int, default=10_000)
    args = ap.parse_args()

    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from event_replay.spark import build_session

    spark = build_session(master="local[2]", conf={"spark.driver.memory": "4g"})
    et = F.unix_millis("event_time")
    rows = (spark.read.parquet(args.log).select("key", "arrival_time", "value", et.alias("et"))
            .withColumn("window_start", F.col("et") - F.pmod(F.col("et"), F.lit(args.size_ms)))
            .withColumn("window_end", F.col("window_start") + args.size_ms)
            .localCheckpoint(eager=True))
    wid = ["key", "window_start", "window_end"]
    aggs = [F.count(F.lit(1)).alias("cnt"), F.max("arrival_time").alias("arrival_time"),
            F.sum("value").alias("total"), F.max("value").alias("max_value")]

    def today(out: str) -> None:
        (rows.groupBy(*wid).agg(*aggs).repartition(args.files, F.col("key"))
         .sortWithinPartitions(*wid).write.mode("overwrite").parquet(out))

    def prepartitioned(out: str) -> None:
        (rows.repartition(args.files, F.col("key")).groupBy(*wid).agg(*aggs)
         .sortWithinPartitions(*wid).write.mode("overwrite").parquet(out))

    times: dict[str, list[float]] = {"today": [], "prepartitioned": []}
    for rep in range(args.reps):
        for name, fn in (("today", today), ("prepartitioned", prepartitioned)):
            t0 = time.monotonic()
            fn(f"{args.out}/{name}")
            times[name].append(time.monotonic() - t0)
            print(f"rep {rep + 1} {name}: {times[name][-1]:.2f} s", flush=True)
    spark.stop()

    def files(name: str):
        return [(f.name.split("-")[1], pq.read_table(f)) for f in sorted(Path(args.out, name).glob("part-*.parquet"))]

    same = [(n1, t1.equals(t2)) for (n1, t1), (n2, t2) in zip(files("today"), files("prepartitioned")) if n1 == n2]
    a, b = statistics.median(times["today"]), statistics.median(times["prepartitioned"])
    print(f"median today {a:.2f} s, prepartitioned {b:.2f} s, ratio prepartitioned/today {b / a:.2f}; "
          f"files equal: {sum(ok for _, ok in same)}/{len(same)}")
    return 0 if same and all(ok for _, ok in same) else 1


if __name__ == "__main__":
    sys.exit(main())
