"""tuning/lag_points.py: N and V in one bucketed pass equal a plain walk over the changes in replay-time order, as
figures.py's module doc defines them: random changes over many buckets (bucket edges, empty buckets between), idle
splits and stream changes, null and infinite watermarks, several changes at one replay time."""
from __future__ import annotations

import random

import pytest

from event_replay.semantics.durations import NEG_INF, POS_INF
from event_replay.tuning.lag_points import lag_points
from event_replay.tuning.running import BUCKET

pytestmark = pytest.mark.spark
SCHEMA = "scope string, split string, idle boolean, watermark long, replay_time long"


def _changes(seed: int, n: int = 300) -> list[tuple]:
    rnd = random.Random(seed)
    times = sorted({k * BUCKET + d for k in (0, 1, 6) for d in (-1, 0, 1) if k * BUCKET + d >= 0}
                   | {rnd.randrange(0, 9 * BUCKET) for _ in range(n // 3)})
    rows = []
    for _ in range(n):
        t = rnd.choice(times)
        value = rnd.choice([None, POS_INF, NEG_INF] + [rnd.randrange(-500, 5000) for _ in range(6)])
        idle = rnd.random() < 0.25
        if rnd.random() < 0.3:
            rows.append(("stream", None, idle, None if idle and rnd.random() < 0.7 else value, t))
        else:
            rows.append(("split", f"p{rnd.randrange(3)}", idle, None if idle else value, t))
    return rows


def _walk(rows: list[tuple], lag_ms: int) -> dict[int, tuple]:
    """{t: (newest, v, published, stream_change)} by the definitions, one replay time after the other."""
    out, n, sm, v = {}, None, None, None
    for t in sorted({r[4] for r in rows}):
        at = [r for r in rows if r[4] == t]
        pub = [w for s, _, idle, w, _ in at if s == "split" and not idle and w not in (None, POS_INF, NEG_INF)]
        split_max = [w for s, _, idle, w, _ in at if s == "split" and not idle and w is not None]
        stream = [r for r in at if r[0] == "stream"]
        if pub:
            n = max(pub) + lag_ms if n is None else max(n, max(pub) + lag_ms)
        if split_max:
            sm = max(split_max) if sm is None else max(sm, max(split_max))
        if stream:
            w = max((r[3] for r in stream if r[3] is not None), default=None)
            e = sm if any(r[2] for r in stream) else w
            if e is not None:
                v = e if v is None else max(v, e)
        if pub or stream:
            out[t] = (n, v, bool(pub), bool(stream))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_one_pass_equals_a_walk_over_the_changes(spark, seed):
    rows = _changes(seed)
    want = _walk(rows, lag_ms=7)
    got = {r["t"]: r for r in lag_points(spark.createDataFrame(rows, SCHEMA).repartition(3), 7).collect()}
    assert len({t // BUCKET for t in want}) > 5 and set(got) == set(want)
    times = sorted(want)
    for i, t in enumerate(times):
        r = got[t]
        assert (r["newest"], r["v"], r["published"], r["stream_change"]) == want[t], t
        assert r["next_t"] == (times[i + 1] if i + 1 < len(times) else None), t


def test_side_by_side_by_variant_equals_each_alone(spark):
    """`by`: two series in one pass, each with its own lag (a column), equal each series' pass alone."""
    from pyspark.sql import functions as F

    rows = {0: _changes(1, 120), 1: _changes(2, 120)}
    lags = {0: 7, 1: 501}
    df = spark.createDataFrame([(v, *r) for v, rs in rows.items() for r in rs], "variant int, " + SCHEMA)
    lag = F.when(F.col("variant") == 0, F.lit(lags[0])).otherwise(F.lit(lags[1]))
    together = lag_points(df.repartition(3), lag, ["variant"]).collect()
    for v in rows:
        alone = lag_points(spark.createDataFrame(rows[v], SCHEMA), lags[v]).collect()
        assert sorted(tuple(r)[1:] for r in together if r["variant"] == v) == sorted(tuple(r) for r in alone)
        assert len(alone) > 20
