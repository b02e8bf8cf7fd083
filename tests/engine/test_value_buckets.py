"""value_buckets: for each timer's max timestamp q, the smallest stream value >= q (session timer firings with the
timeline on the driver), against a brute-force search: ties, queries before and past every value, many buckets,
values spread unevenly, -inf and +inf among the values, no value at all."""
from __future__ import annotations

import random

import numpy as np
import pytest

from event_replay.engine.contract import NEG_INF, POS_INF
from event_replay.engine.windows import value_buckets as vb

pytestmark = pytest.mark.spark


def _check(spark, values: list[int], queries: list[int | None]):
    buckets = vb.value_buckets(spark, np.array(sorted(values), dtype=np.int64))
    firings = spark.createDataFrame([(i, q) for i, q in enumerate(queries)], "i long, __q long")
    got = {r["i"]: r["__v"] for r in buckets.looked_up(firings).collect()}
    want = {i: None if q is None else min((v for v in values if v >= q and v != NEG_INF), default=None)
            for i, q in enumerate(queries)}
    assert got == want
    return buckets


@pytest.mark.parametrize("per_bucket", [64, 2])
def test_lookups_match_a_brute_force_search(spark, monkeypatch, per_bucket):
    monkeypatch.setattr(vb, "VALUES_PER_BUCKET", per_bucket)  # 2: many buckets, so most answers cross one
    rnd = random.Random(per_bucket)
    values = sorted({rnd.randint(0, 400) for _ in range(60)} | {rnd.randint(10_000, 10_050) for _ in range(5)})
    queries = [rnd.randint(-500, 11_000) for _ in range(200)] + values[:10] + [None, -(2**62), 2**62]
    buckets = _check(spark, values, queries)
    if per_bucket == 2:
        assert buckets.count > 10


def test_infinite_values_and_none(spark):
    _check(spark, [NEG_INF, 5, 7, POS_INF], [-3, 5, 6, 8, 10**15])  # +inf answers everything above 7
    _check(spark, [NEG_INF], [0, 100])  # -inf is never >= a timer
    _check(spark, [], [0])
    _check(spark, [POS_INF], [0])
