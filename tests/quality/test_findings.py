"""The rules' findings (quality/findings.py): every query of every batch counted in one Spark job, the first rows of
those that found any in a second, with the same rows and count GX's own metrics give (timestamps as PySpark's collect returns them), and a batch without pinned findings
queried on its own."""
from __future__ import annotations

import datetime as dt

import pytest

from event_replay.quality.findings import PINNED, findings, pin_findings
from event_replay.spark_jobs import counted

pytestmark = pytest.mark.spark

DUPLICATES = "SELECT k, count(*) AS copies FROM {batch} GROUP BY k HAVING count(*) > 1"
LATE = "SELECT * FROM {batch} WHERE t < TIMESTAMP '2024-01-01 00:00:02'"
NONE = "SELECT * FROM {batch} WHERE n < 0"


def _batches(spark):
    t0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    rows = [("a", 1, t0), ("a", 2, t0 + dt.timedelta(seconds=1)), ("b", 3, t0 + dt.timedelta(seconds=5)),
            ("c", 4, None)]
    one = spark.createDataFrame(rows, "k string, n long, t timestamp")
    two = spark.createDataFrame([(i % 3, i) for i in range(300)], "k int, n long")
    return one, two


def _plain(found):
    return sorted(tuple(sorted(r.items())) for r in found["rows"]), found["count"]


def test_every_query_of_every_batch_in_two_jobs_as_gx_would_find_it(spark):
    one, two = _batches(spark)
    with counted(spark, "findings") as jobs:
        pin_findings(spark, {"one": (one, [DUPLICATES, LATE, NONE]), "two": (two, [DUPLICATES, NONE])})
    assert jobs.jobs == 2  # the counts, then the first rows of the queries that found some
    fresh_one, fresh_two = _batches(spark)  # nothing pinned: each query on its own, as GX's metrics run it
    for pinned, fresh, queries in ((one, fresh_one, (DUPLICATES, LATE, NONE)), (two, fresh_two, (DUPLICATES, NONE))):
        for q in queries:
            assert _plain(findings(pinned, q)) == _plain(findings(fresh, q)), q
    assert findings(one, DUPLICATES) == {"rows": [{"k": "a", "copies": 2}], "count": 1}
    late = findings(one, LATE)["rows"]
    assert late[0]["t"] == fresh_one.where("n = 1").first()["t"]  # a naive datetime, as collect gives it
    assert findings(two, DUPLICATES)["count"] == 3 and findings(one, NONE) == {"rows": [], "count": 0}


def test_the_rows_are_capped_as_gx_caps_them_the_count_is_not(spark):
    from great_expectations.constants import MAX_RESULT_RECORDS

    many = spark.range(MAX_RESULT_RECORDS + 50).toDF("n")
    pin_findings(spark, {"many": (many, ["SELECT * FROM {batch}"])})
    found = getattr(many, PINNED)["SELECT * FROM {batch}"]
    assert len(found["rows"]) == MAX_RESULT_RECORDS and found["count"] == MAX_RESULT_RECORDS + 50


def test_rules_that_find_nothing_are_one_job(spark):
    one, two = _batches(spark)
    with counted(spark, "findings") as jobs:
        pin_findings(spark, {"one": (one, [NONE]), "two": (two, [NONE, "SELECT * FROM {batch} WHERE n > 1000"])})
    assert jobs.jobs == 1
    assert findings(one, NONE) == {"rows": [], "count": 0} and findings(two, NONE) == {"rows": [], "count": 0}
