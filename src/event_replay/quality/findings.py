"""The rules' unexpected rows, every suite's at once: the saved queries counted together in one Spark job, and the
two GX metrics that hand them to the expectations.

GX evaluates an `UnexpectedRowsExpectation` as two Spark queries of its own (its rows, then their count), one job or
more each: some 40 jobs for the suites, growing with every rule. The custom expectations (expectations.py) read
the metrics of this module instead of GX's `unexpected_rows_query.*`: the same saved query on the same batch, the
same values (its first MAX_RESULT_RECORDS rows, the number of rows it returns). `pin_findings` counts the queries
of every suite in one Spark job (spark_jobs.gather), and gathers the first rows of those that found any in a
second, before the checkpoints run, and pins the results on each batch;
on a batch without them (a suite run on a frame of its own), a metric queries the batch as GX's own does. GX still
validates every expectation from these metrics (success, observed value, the unexpected rows Data Docs show).
"""
from __future__ import annotations

import datetime as dt
from typing import Any, Mapping

from great_expectations.constants import MAX_RESULT_RECORDS
from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine import SparkDFExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.query_metric_provider import QueryMetricProvider
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..spark_jobs import gather

PINNED = "_replay_rule_findings"  # the attribute of a batch (a DataFrame) holding {query: findings}
TABLE_METRIC = "replay_rule_rows.table"
COUNT_METRIC = "replay_rule_rows.row_count"


def _run(spark: SparkSession, df: DataFrame, query: str, view: str) -> DataFrame:
    df.createOrReplaceTempView(view)
    return spark.sql(QueryMetricProvider._format_query(query, batch=view))


def findings(df: DataFrame, query: str) -> dict[str, Any]:
    """{"rows": the first rows of the query on the batch, "count": how many it returns}: pinned, else queried
    (and pinned: the other metric of the same query reads it)."""
    pinned = getattr(df, PINNED, None)
    if pinned is None:
        pinned = {}
        setattr(df, PINNED, pinned)
    if query not in pinned:
        q = _run(df.sparkSession, df, query, "tmp_view")  # GX's own metrics' view name
        pinned[query] = {"rows": [r.asDict() for r in q.limit(MAX_RESULT_RECORDS).collect()], "count": q.count()}
    return pinned[query]


def _batch_findings(metric, execution_engine, metric_domain_kwargs, metric_value_kwargs) -> dict[str, Any]:
    """The findings of the metric's query on the batch GX hands it (both metrics below read them)."""
    df, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
    return findings(df, metric._get_query_from_metric_value_kwargs(metric_value_kwargs))


class RuleRows(QueryMetricProvider):
    """The first unexpected rows of a rule (GX's unexpected_rows_query.table, from the pinned findings)."""
    metric_name = TABLE_METRIC
    value_keys = ("unexpected_rows_query",)
    query_param_name = "unexpected_rows_query"

    @metric_value(engine=SparkDFExecutionEngine)
    def _spark(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
        return _batch_findings(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs)["rows"]


class RuleRowCount(QueryMetricProvider):
    """How many unexpected rows a rule has (GX's unexpected_rows_query.row_count, from the pinned findings)."""
    metric_name = COUNT_METRIC
    value_keys = ("unexpected_rows_query",)
    query_param_name = "unexpected_rows_query"

    @metric_value(engine=SparkDFExecutionEngine)
    def _spark(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
        return _batch_findings(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs)["count"]


def pin_findings(spark: SparkSession, queries: Mapping[str, tuple[DataFrame, list[str]]]) -> None:
    """{suite: (its batch, its rules' queries)}: every query's count in one Spark job, pinned on its batch with its
    first rows, which a second job gathers only for the queries that found any (a healthy output's suites plan
    and run each query once, not twice)."""
    plan = []
    for suite, (df, rules) in queries.items():
        for i, query in enumerate(dict.fromkeys(rules)):
            plan.append((df, query, f"{suite}/{i}", _run(spark, df, query, f"replay_rules_{suite}")))
    counted = gather({name: q.agg(F.count(F.lit(1)).alias("n")) for _, _, name, q in plan})
    found = {name: int(counted[name][0]["n"]) for _, _, name, _ in plan}
    rows = gather({name: q.limit(MAX_RESULT_RECORDS) for _, _, name, q in plan if found[name]})
    for df, query, name, q in plan:
        pinned = getattr(df, PINNED, None) or {}
        pinned[query] = {"rows": [_typed(r, q.schema) for r in rows.get(name, [])], "count": found[name]}
        setattr(df, PINNED, pinned)


def _typed(row: dict[str, Any], schema: T.StructType) -> dict[str, Any]:
    """A gathered row (JSON: times as text in the session's time zone, UTC) as PySpark's collect gives it: a
    timestamp as a naive datetime in the driver's local time, a date as a date."""
    out = dict(row)
    for f in schema.fields:
        v = out.get(f.name)
        if v is None:
            continue
        if isinstance(f.dataType, T.TimestampType):
            out[f.name] = dt.datetime.fromisoformat(v).replace(tzinfo=dt.timezone.utc).astimezone().replace(
                tzinfo=None)
        elif isinstance(f.dataType, T.TimestampNTZType):
            out[f.name] = dt.datetime.fromisoformat(v)
        elif isinstance(f.dataType, T.DateType):
            out[f.name] = dt.date.fromisoformat(v)
    return out
