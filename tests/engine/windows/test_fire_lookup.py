"""engine/windows/fire_lookup.py: `_next_values` (the as-of lookup of session timer firings: for each query q the
smallest stream value >= q) against a brute-force search, with ties, queries past every value and several time
buckets; `window_ends` and `fire_table`, the lookup without the extension."""
from __future__ import annotations

import random

import numpy as np

import pytest

from event_replay.engine.windows import fire_lookup
from event_replay.semantics.window_config import WindowConfig
from event_replay.semantics.windows import sliding, tumbling

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


@pytest.mark.parametrize("window", [WindowConfig("tumbling", size_ms=10, offset_ms=3),
                                    WindowConfig("sliding", size_ms=10, slide_ms=4, offset_ms=1)])
def test_window_ends_are_every_end_of_a_window_holding_a_time_in_range(window):
    lo, hi = -7, 41
    assign = (lambda t: tumbling(t, 10, 3)) if window.type == "tumbling" else (lambda t: sliding(t, 10, 4, 1))
    want = sorted({end for t in range(lo, hi + 1) for _, end in assign(t)})
    assert fire_lookup.window_ends(window, lo, hi).tolist() == want


def test_window_ends_give_up_above_the_bound(monkeypatch):
    monkeypatch.setattr(fire_lookup, "FIRE_TABLE_MAX", 5)
    w = WindowConfig("tumbling", size_ms=10)
    assert fire_lookup.window_ends(w, 0, 49) is not None  # 5 windows
    assert fire_lookup.window_ends(w, 0, 50) is None


def test_fire_table_holds_the_next_stream_value_of_each_max_timestamp(spark):
    ends = np.array([10, 20, 30, 40], dtype=np.int64)
    values = np.array([5, 19, 25, 29], dtype=np.int64)  # 19 and 29 equal a max timestamp; nothing reaches 39
    got = {r["__q"]: r["__v"] for r in fire_lookup.fire_table(spark, ends, values).collect()}
    assert got == {9: 19, 19: 19, 29: 29, 39: None}
    empty = fire_lookup.fire_table(spark, ends, np.array([], dtype=np.int64)).collect()
    assert [r["__v"] for r in empty] == [None] * 4
