"""engine.fixed_plans: the replay's plan settings are set on the session, each unless the deployment set it; the
extension's planner strategy (WholeAggregate.java) makes an aggregate over rows just partitioned by its key one
hash aggregate, with the same results, and leaves every other aggregate to Spark."""
from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from event_replay import engine


class _Session:
    """What fixed_plans reads and writes of a SparkSession: the context's conf (deployment) and the session's."""

    def __init__(self, deployed: dict[str, str]):
        self.deployed, self.session = deployed, {}
        outer = self

        class Conf:
            def contains(self, key):
                return key in outer.deployed

            def set(self, key, value):
                outer.session[key] = value

        class Context:
            def getConf(self):
                return Conf()

        class NoJvm:  # no extension here: its classes are looked up and not found
            def __getattr__(self, name):
                return None

        self.sparkContext, self.conf, self._jvm = Context(), Conf(), NoJvm()


def test_every_setting_is_applied():
    s = _Session({})
    engine.fixed_plans(s)
    assert s.session == engine._PLAN_SETTINGS
    assert s.session["spark.sql.adaptive.enabled"] == "false"
    assert s.session["spark.sql.requireAllClusterKeysForCoPartition"] == "false"


def test_a_deployments_own_setting_is_kept():
    s = _Session({"spark.sql.adaptive.enabled": "true"})
    engine.fixed_plans(s)
    assert "spark.sql.adaptive.enabled" not in s.session
    assert set(s.session) == set(engine._PLAN_SETTINGS) - {"spark.sql.adaptive.enabled"}


def test_on_a_real_session(spark):
    engine.fixed_plans(spark)
    for key, value in engine._PLAN_SETTINGS.items():
        if not spark.sparkContext.getConf().contains(key):
            assert spark.conf.get(key) == value


def _aggregate_steps(df) -> list[str]:
    """The hash aggregates in df's physical plan, bottom up: "partial", or "whole" (a final step or a complete one:
    the plan prints both alike; a "whole" with no "partial" under it is the complete one)."""
    plan = df._jdf.queryExecution().executedPlan().toString()
    return ["partial" if "partial_" in line else "whole"
            for line in reversed(plan.splitlines()) if "HashAggregate(" in line]


@pytest.mark.spark
def test_an_aggregate_over_rows_partitioned_by_its_key_is_one_step(spark):
    engine.fixed_plans(spark)
    rows = spark.createDataFrame([(f"k{i % 7}", i % 3, i, None if i % 5 == 0 else i * 2) for i in range(200)],
                                 "key string, w long, i long, v long")
    aggs = [F.count(F.lit(1)).alias("n"), F.sum("v").alias("s"), F.max("v").alias("m"),
            F.expr("min(v) FILTER (WHERE i % 2 = 0)").alias("f")]
    by_key = rows.repartition(4, "key").groupBy("key", "w").agg(*aggs)
    assert _aggregate_steps(by_key) == ["whole"]
    assert "Exchange" in by_key._jdf.queryExecution().executedPlan().toString()  # only the repartition's
    plain = rows.groupBy("key", "w").agg(*aggs)  # Spark's own plan: partial, shuffle, final
    assert _aggregate_steps(plain) == ["partial", "whole"]
    assert sorted(map(tuple, by_key.collect())) == sorted(map(tuple, plain.collect()))
    # Partitioned by a column the aggregate does not group by: a shuffle follows, Spark plans it.
    other = rows.repartition(4, "i").groupBy("key", "w").agg(*aggs)
    assert _aggregate_steps(other) == ["partial", "whole"]
    distinct = rows.repartition(4, "key").groupBy("key").agg(F.countDistinct("v"))
    assert "partial" in _aggregate_steps(distinct)  # a distinct aggregate: Spark's own steps
