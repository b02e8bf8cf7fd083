"""fire_lookup._next_values: for each query q, the smallest stream value >= q (the as-of lookup of session timer
firings), against a brute-force search: ties, queries past every value, several time buckets."""
from __future__ import annotations

import random

import pytest

from event_replay.engine.windows import fire_lookup

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("bucket_bits", [20, 3])
def test_next_values_match_a_brute_force_search(spark, monkeypatch, bucket_bits):
    monkeypatch.setattr(fire_lookup, "_BUCKET_BITS", bucket_bits)  # 3: many buckets, so most answers cross one
    rnd = random.Random(bucket_bits)
    values = sorted({rnd.randint(0, 400) for _ in range(60)})
    queries = sorted({rnd.randint(-5, 420) for _ in range(120)} | set(values[:10]))  # some equal a value
    got = fire_lookup._next_values(spark.createDataFrame([(q,) for q in queries], "__q long"),
                               spark.createDataFrame([(v,) for v in values], "watermark long")).collect()
    want = {q: min((v for v in values if v >= q), default=None) for q in queries}
    assert {r["__q"]: r["__v"] for r in got} == want
    assert len(got) == len(queries)
