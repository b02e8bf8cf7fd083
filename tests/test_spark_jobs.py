"""A step's Spark jobs are counted by its own job group: the jobs it ran, not those of a step beside it."""
from __future__ import annotations

import threading

from pyspark.sql import functions as F

from event_replay.spark_jobs import counted, first_rows, gather, one_job_plans


def test_counts_the_jobs_of_the_block_only(spark):
    df = spark.range(10)
    df.collect()  # before the block: not counted
    with counted(spark, "two") as c:  # a collect of a range is one Spark job
        df.collect()
        df.collect()
    assert c.step == "two" and c.jobs == 2
    with counted(spark, "none") as empty:
        pass
    assert empty.jobs == 0
    df.collect()  # after the block: the group is cleared, the count is final
    assert c.jobs == 2


def test_a_step_counted_inside_another_is_part_of_its_count(spark):
    df = spark.range(10)
    with counted(spark, "outer") as outer:
        df.collect()
        with counted(spark, "inner") as inner:
            df.collect()
            df.collect()
        df.collect()  # the outer step's group again
    assert (inner.jobs, outer.jobs) == (2, 4)
    with counted(spark, "after") as after:
        df.collect()
    assert (after.jobs, outer.jobs) == (1, 4)


def test_two_steps_side_by_side_in_two_threads_are_told_apart(spark):
    seen = {}

    def step(name: str, n: int) -> None:
        with counted(spark, name) as c:
            for _ in range(n):
                spark.range(5).collect()
        seen[name] = c.jobs

    threads = [threading.Thread(target=step, args=("a", 1)), threading.Thread(target=step, args=("b", 3))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": 1, "b": 3}


def test_gather_collects_many_small_frames_in_one_job(spark):
    big = spark.range(1000).select((F.col("id") % 7).alias("k"), F.col("id"))
    frames = {"per_key": big.groupBy("k").agg(F.count(F.lit(1)).alias("n")),
              "total": big.agg(F.sum("id").alias("s"), F.lit(None).cast("long").alias("nothing"),
                               F.to_timestamp(F.lit("2024-01-01 00:00:05")).alias("at")),
              "empty": big.where(F.col("id") < 0)}
    with counted(spark, "gather") as c:
        found = gather(frames)
    assert c.jobs == 1
    assert sorted((r["k"], r["n"]) for r in found["per_key"]) == sorted(
        (r["k"], r["n"]) for r in frames["per_key"].collect())
    assert found["total"] == [{"s": 499500, "nothing": None, "at": "2024-01-01 00:00:05"}]
    assert found["empty"] == []


def test_first_rows_equal_a_global_sort_and_limit(spark):
    df = spark.range(500).select(((F.col("id") * 7919) % 503).alias("a"), (F.col("id") % 3).alias("b"))
    ours = [tuple(r) for r in first_rows(df, ["a", "b"], 25).collect()]
    assert ours == [tuple(r) for r in df.orderBy("a", "b").limit(25).collect()]


def test_one_job_plans_restores_the_settings(spark):
    keys = ("spark.sql.autoBroadcastJoinThreshold", "spark.sql.adaptive.enabled")
    before = [spark.conf.get(k) for k in keys]
    with one_job_plans(spark):
        assert [spark.conf.get(k) for k in keys] == ["-1", "false"]
    assert [spark.conf.get(k) for k in keys] == before
