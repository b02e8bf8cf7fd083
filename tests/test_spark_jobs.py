"""A step's Spark jobs are counted by its own job group: the jobs it ran, not those of a step beside it."""
from __future__ import annotations

import threading

from event_replay.spark_jobs import counted


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
