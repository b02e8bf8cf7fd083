"""The tuning's running sum, computed per bucket of the order column plus the earlier buckets' summary, equals a
plain running sum over the whole series: values across many buckets (negative ones, empty buckets between,
values on a bucket's edges), nulls, and no window over all rows in the plan."""
from __future__ import annotations

import random
import re

import pytest

from event_replay.tuning.running import BUCKET, running_sum

pytestmark = pytest.mark.spark


def _series(seed: int, n: int = 400) -> list[tuple[int, int | None]]:
    rnd = random.Random(seed)
    edges = [k * BUCKET + d for k in (-3, 0, 1, 7) for d in (-1, 0, 1)]  # around bucket edges, a gap of 5 buckets
    orders = sorted(set(edges + [rnd.randrange(-4 * BUCKET, 9 * BUCKET) for _ in range(n)]))
    rnd.shuffle(orders)
    return [(t, None if rnd.random() < 0.2 else rnd.randrange(-1000, 1000)) for t in orders]


def test_running_aggregates_equal_a_plain_running_computation(spark):
    data = _series(3)
    df = spark.createDataFrame(data, "t long, x long").repartition(3)
    got = {r["t"]: r for r in running_sum(df, "t", "x", "sm", total="all").collect()}
    ordered = sorted(data)
    assert len({t // BUCKET for t, _ in ordered}) > 5
    total = sum(x for _, x in data if x is not None)
    sm = None
    for t, x in ordered:
        if x is not None:
            sm = x if sm is None else sm + x
        assert (got[t]["sm"], got[t]["all"]) == (sm, total), t
    assert set(got) == {t for t, _ in data} and "_running" not in " ".join(got[ordered[0][0]].asDict())


def test_no_window_over_all_rows(spark):
    df = spark.createDataFrame(_series(5, 50), "t long, x long")
    plan = running_sum(df, "t", "x", "sm")._jdf.queryExecution().executedPlan().toString()
    assert "Window" in plan, plan
    lines = [re.sub(r"^\*\(\d+\) ", "", line.strip(" :+-")) for line in plan.splitlines()]  # no codegen ids
    # Only the buckets' summaries (one row per bucket) meet in one partition, never the rows.
    single = [i for i, line in enumerate(lines) if line.startswith("Exchange SinglePartition")]
    assert single, plan
    for i in single:
        assert lines[i + 1].startswith("HashAggregate(keys=[_running_bucket"), plan


def test_lazy_no_spark_job(spark):
    """Building the running sums runs nothing: the caller's one action computes them."""
    from event_replay.spark_jobs import counted
    from event_replay.tuning.running import release

    data = _series(5, 50)
    df = spark.createDataFrame(data, "t long, x long")
    with counted(spark, "plan-only") as jobs:
        out = running_sum(running_sum(df, "t", "x", "s"), "t", "s", "ss", total="all")
    assert jobs.jobs == 0
    assert out.count() == len(data)
    release()


def test_side_by_side_by_group_equals_each_alone(spark):
    """`by`: two series summed in one plan, each on its own rows only (the same order values in both)."""
    data = {0: _series(3, 100), 1: _series(4, 100)}
    df = spark.createDataFrame([(g, t, x) for g, s in data.items() for t, x in s], "g int, t long, x long")
    together = running_sum(df.repartition(3), "t", "x", "sm", total="all", by=["g"]).collect()
    assert {r["t"] for r in together if r["g"] == 0} & {r["t"] for r in together if r["g"] == 1}  # orders shared
    for g, series in data.items():
        alone = running_sum(spark.createDataFrame(series, "t long, x long"), "t", "x", "sm", total="all").collect()
        assert sorted(tuple(r)[1:] for r in together if r["g"] == g) == sorted(tuple(r) for r in alone)
