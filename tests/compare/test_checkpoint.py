"""The comparison's checkpoints (compare/checkpoint.py): lazy, on disk only (no partition held in the heap), the
same rows, and unpersisted when the `freed` block around them ends (an error too; nested blocks free their own)."""
from __future__ import annotations

import pytest

from event_replay.compare.checkpoint import freed, on_disk
from event_replay.spark_jobs import counted

pytestmark = pytest.mark.spark


def _persisted(spark) -> dict[int, tuple[int, int]]:
    """{rdd id: (bytes in memory, bytes on disk)} of the session's persisted RDDs."""
    return {s.id(): (s.memSize(), s.diskSize()) for s in spark.sparkContext._jsc.sc().getRDDStorageInfo()}


def _rdd_id(df) -> int:
    return df._jdf.queryExecution().logical().rdd().id()


def test_on_disk_is_lazy_stored_on_disk_only_with_the_same_rows(spark):
    df = spark.range(5000).selectExpr("id", "id % 7 AS k")
    with counted(spark, "checkpoint") as jobs:
        cp = on_disk(df.where("k != 3"))
    assert jobs.jobs == 0  # computed by the first job that reads it
    assert sorted(tuple(r) for r in cp.collect()) == sorted(tuple(r) for r in df.where("k != 3").collect())
    memory, disk = _persisted(spark)[_rdd_id(cp)]
    assert memory == 0 and disk > 0
    assert cp.groupBy("k").count().count() == 6  # read again from its blocks


def test_on_disk_eager_is_computed_at_once_on_disk_only(spark):
    with counted(spark, "checkpoint") as jobs:
        cp = on_disk(spark.range(3000).selectExpr("id % 5 AS k"), eager=True)
    assert jobs.jobs > 0  # computed now, before anything reads it
    memory, disk = _persisted(spark)[_rdd_id(cp)]
    assert memory == 0 and disk > 0
    assert cp.count() == 3000


def test_freed_unpersists_what_was_checkpointed_in_it(spark):
    outside = on_disk(spark.range(10))  # no block open: kept, as before
    outside.count()
    with freed():
        a = on_disk(spark.range(100))
        a.count()
        with freed():
            b = on_disk(spark.range(200))
            b.count()
        assert _rdd_id(b) not in _persisted(spark)
        assert _rdd_id(a) in _persisted(spark)  # the inner block frees its own only
    assert _rdd_id(a) not in _persisted(spark)
    assert _rdd_id(outside) in _persisted(spark)
    with pytest.raises(ZeroDivisionError):
        with freed():
            c = on_disk(spark.range(300))
            c.count()
            1 / 0
    assert _rdd_id(c) not in _persisted(spark)
    outside._jdf.queryExecution().logical().rdd().unpersist(True)
