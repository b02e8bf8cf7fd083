"""A (variant, value) as one string (tuning/variant_key.py): distinct pairs stay distinct (values that look like
another pair's string, the empty string, nulls), a variant's nulls meet each other, and both parts come back."""
from __future__ import annotations

from pyspark.sql import functions as F

from event_replay.tuning import variant_key


def test_pairs_stay_apart_and_come_back(spark):
    values = [None, "", "|", "0|", "1", "1|x", "k005", "é|ü", "0|k005"]
    variants = [0, 1, 10, 12]
    digits = variant_key.width(variants)
    assert digits == 2 and variant_key.width([0]) == 1
    df = spark.createDataFrame([(v, s) for v in variants for s in values], "variant int, value string")
    key = variant_key.tagged(F.col("variant"), F.col("value"), digits)
    out = df.select("variant", "value", key.alias("key")).select(
        "variant", "value", "key", variant_key.variant_of(F.col("key"), digits).alias("v"),
        variant_key.value_of(F.col("key"), digits).alias("back")).collect()
    assert len({r["key"] for r in out}) == len(variants) * len(values)  # no two pairs share a string
    assert all(r["key"] is not None for r in out)  # a null value still has its variant's key
    assert all(r["v"] == r["variant"] and r["back"] == r["value"] for r in out)
