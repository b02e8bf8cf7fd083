"""The session windows' pass (engine/windows/sessions.py, SessionWalk.java) alone: fed the reference model's own
`wm_before` per row, every firing must hold exactly the reference firing's rows, and the late rows must be the
reference's. Many cases go through one Spark job: each case gets its own keys and splits."""
from __future__ import annotations

from typing import Any, Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F
from pyspark.sql import types as T

from event_replay.engine.elements import PENDING
from event_replay.engine.windows.sessions import session_elements
from event_replay.semantics.config import JobConfig, parse_config, to_raw
from event_replay.semantics.durations import NEG_INF, POS_INF
from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import replay
from strategies import config, random_case

ROWS = T.StructType([
    T.StructField("split", T.StringType()), T.StructField("offset", T.LongType()),
    T.StructField("arrival_time", T.LongType()), T.StructField("event_time", T.LongType()),
    T.StructField("key", T.StringType()), T.StructField("value", T.LongType()),
    T.StructField("wm_before", T.LongType()),
])
INPUT_COLS = [c for c in ROWS.fieldNames() if c != "wm_before"]


def session_cfg(cfg: JobConfig, gap: int, lateness: int) -> JobConfig:
    raw = to_raw(cfg)
    raw["window"] = {"type": "session", "gap": gap, "allowed_lateness": lateness, "time": raw["window"]["time"]}
    return parse_config(raw)


def walk(spark, cases: Sequence[tuple[list[LogRow], JobConfig]], declared: Sequence[Any] | None = None):
    """Each case's (firings with their rows, late rows), from one pass over all of them, checked against the
    reference; PENDING firings resolved against the case's stream values as fire_lookup.py does. The cases share
    the first case's gap and lateness; `declared`: each case's declared splits."""
    declared = declared or [None] * len(cases)
    refs = [replay(rows, cfg, declared_splits=d) for (rows, cfg), d in zip(cases, declared)]
    data = []
    for n, ((rows, _), ref) in enumerate(zip(cases, refs)):
        data += [(f"{n}/{r.split}", r.offset, r.arrival_time, r.event_time, f"{n}/{r.key}", r.payload.get("value"),
                  ref.wm_before[(r.split, r.offset)]) for r in rows if (r.split, r.offset) in ref.wm_before]
    elems, late = session_elements(spark.createDataFrame(data, ROWS), cases[0][1], INPUT_COLS)
    got = (elems.select(F.lit("m").alias("kind"), *elems.columns)
           .unionByName(late.select(F.lit("l").alias("kind"), *late.columns), allowMissingColumns=True).collect())
    out: list[tuple[list, list]] = [([], []) for _ in cases]
    held: dict[tuple, list] = {}
    for e in sorted((e for e in got if e.kind == "m"), key=lambda e: e["__pos"]):
        n, split = e.split.split("/", 1)
        wid = (e["__wid_split"], e["__wid_offset"])
        held.setdefault(wid, []).append((split, e.offset))
        assert len(held[wid]) == e["__pos"]
        if e.fire_reason is not None:
            out[int(n)][0].append((e.key.split("/", 1)[1], e["__ws"], e["__we"], e.fire_index, e.fire_watermark,
                                   e.fire_reason, tuple(sorted(held[wid]))))
    for r in (r for r in got if r.kind == "l"):
        n, split = r.split.split("/", 1)
        out[int(n)][1].append((split, r.offset, r.late_watermark))
    for (_, cfg), ref, (firings, late) in zip(cases, refs, out):
        assert sorted(_resolved(firings, ref.stream_values, cfg), key=str) == sorted(
            ((f.key, f.window_start, f.window_end, f.fire_index, f.fire_watermark, f.fire_reason, f.rows)
             for f in ref.firings), key=str)
        assert sorted(late) == sorted((lr.row.split, lr.row.offset, lr.late_watermark) for lr in ref.late_rows)
    return out


def _resolved(firings: list, stream_values: list[int], cfg: JobConfig) -> list:
    resolved = []
    for key, ws, we, index, fw, reason, rows in firings:
        if reason == PENDING:  # the timer's stream value, as fire_lookup.py looks it up
            fw = min((v for v in stream_values if v >= we - 1), default=None)
            reason = "watermark" if fw is not None else "end_of_input"
            if fw is None and cfg.replay.end_of_input == "hold":
                continue
        resolved.append((key, ws, we, index, fw, reason, rows))
    return resolved


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seeds=st.lists(st.integers(min_value=0, max_value=2**31 - 1), min_size=40, max_size=40),
       gap=st.sampled_from([1, 300, 1000, 5000]), lateness=st.sampled_from([0, 700, 4000]))
def test_walk_holds_the_reference_rows(spark, seeds, gap, lateness):
    """40 random logs and configs per Spark job, all with the drawn gap and lateness."""
    cases = [random_case(seed) for seed in seeds]
    walk(spark, [(list(c.rows), session_cfg(c.cfg, gap, lateness)) for c in cases], [c.declared_splits for c in cases])


def per_event(lag: int = 0, lateness: int = 0, gap: int = 1000, **replay_opts: Any) -> JobConfig:
    return config(watermark={"max_out_of_orderness": lag, "emit": "per_event"},
                  window={"type": "session", "gap": gap, "allowed_lateness": lateness},
                  replay={"end_of_input": "flush", **replay_opts})


def log(times: Sequence[int], key: str = "k", splits: int = 1) -> list[LogRow]:
    """Rows in arrival order, round-robin over `splits` splits."""
    return [LogRow(f"p{i % splits}", i // splits, i, t, key, {"value": i}) for i, t in enumerate(times)]


def test_long_merge_chains(spark):
    """Each row's window touches the previous one: 3000 windows nested in one another (the membership order is
    read without recursion), and a chain built backwards that also bridges gaps."""
    cfg = per_event(lag=10**9)
    forward = log([i * 1000 for i in range(3000)])
    backward = log([i * 500 for i in range(2000, 0, -2)] + [i * 500 for i in range(1, 2000, 2)], key="b")
    (fwd, _), (bwd, _) = walk(spark, [(forward, cfg), (backward, cfg)])
    assert max(len(f[-1]) for f in fwd) == 3000 and max(len(f[-1]) for f in bwd) == 2000


def test_equal_event_times_and_touching_windows(spark):
    """Six rows with one event time and one arrival time; windows exactly `gap` apart merge ([0, g) and [g, 2g)
    touch), one more apart do not; lateness 0 and a positive one, with late rows and (then) a late firing."""
    times = [0, 1000, 2000, 3001] + [5000] * 6 + [7000, 3500, 6000, 6999, 20000, 4000, 5999, 9000]
    rows = [LogRow("p0", i, 4 if 4 <= i < 10 else i, t, "k", {"value": i}) for i, t in enumerate(times)]
    for lateness in (0, 2500):
        [(firings, late)] = walk(spark, [(rows, per_event(lag=1500, lateness=lateness, gap=1000))])
        bounds = {(f[1], f[2]) for f in firings}
        assert {(0, 3000), (3001, 4001), (5000, 8000)} <= bounds  # touching merged, 3001 apart
        assert any(f[5] == "late_row" for f in firings) == (lateness > 0)  # 3500 grows [3001, 4001) late
        assert len(late) == 4 - (lateness > 0)  # 4000, 5999, 9000 after 20000 (and 3500 without lateness)


def test_first_rows_see_minus_infinity(spark):
    """wm_before is Long.MIN_VALUE until the first watermark: nothing is late or fires before it."""
    rows = log([3000, 1000, 2000, 9000], splits=2)
    cfg = per_event(lag=500, lateness=0)
    assert replay(rows, cfg).wm_before[("p0", 0)] == NEG_INF
    walk(spark, [(rows, cfg)])


def test_cleanup_saturates_at_plus_infinity(spark):
    """A lateness that takes the cleanup time past +inf saturates (Flink's); windows then live to the end."""
    times = [253_402_300_799_000, 253_402_300_799_999, 1000, 253_402_300_790_000]
    [(firings, late)] = walk(spark, [(log(times), per_event(lag=0, lateness=POS_INF - 2**40, gap=10**13))])
    assert not late and any(f[5] == "late_row" for f in firings)


def test_session_end_past_plus_infinity_saturates(spark):
    """Event times the source never lets through (past year 9999), fed to the pass directly: the window's end
    saturates at +inf instead of wrapping around."""
    data = [("p0", 0, 0, POS_INF - 5, "k", 1, NEG_INF), ("p0", 1, 1, POS_INF - 1, "k", 2, POS_INF - 5)]
    elems, late = session_elements(spark.createDataFrame(data, ROWS), per_event(gap=100), INPUT_COLS)
    got = sorted((e.offset, e["__ws"], e["__we"], e.fire_reason) for e in elems.collect())
    assert got == [(0, POS_INF - 5, POS_INF, None), (1, POS_INF - 5, POS_INF, PENDING)]
    assert late.count() == 0
