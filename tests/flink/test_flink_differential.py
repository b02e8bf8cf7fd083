"""Differential tests: Apache Flink's own classes (tests/flink/harness) against the reference model (SEMANTICS §9).

First the worked examples of SEMANTICS §8 A-C must come out of Flink exactly as the text states (this proves the
harness), and the reference must equal Flink on them. Then generated logs x configs covering every feature must give,
firing for firing and late row for late row, the same result in Flink and in the reference model.
All cases of the module run in ONE JVM (one MiniCluster), in the module-scoped fixture.
"""
from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from event_replay.semantics.model import ReplayResult  # noqa: E402
from event_replay.semantics.reference import Replayer, declared_splits_of, replay, replay_range_of  # noqa: E402
from flink_cases import (ALL, EXAMPLES, FILTERED, fired, format_watermark, GENERATED, late, PROCESSING,  # noqa: E402
                         stream_changes, TARGETED)
from flink_harness import run_flink  # noqa: E402
from shape_cases import SHAPES, with_having  # noqa: E402

pytestmark = pytest.mark.flink



@pytest.fixture(scope="module")
def flink_results() -> dict[str, ReplayResult]:
    results = run_flink([(rows, cfg, declared) for _, rows, cfg, declared in ALL + SHAPES])
    return {name: with_having(r, cfg) for (name, _, cfg, _), r in zip(ALL + SHAPES, results)}


CASES = {name: (rows, cfg, declared) for name, rows, cfg, declared in ALL + SHAPES}


def reference(name: str) -> ReplayResult:
    rows, cfg, declared = CASES[name]
    return replay(rows, cfg, declared_splits=declared)


# -- comparison with a readable diff --------------------------------------------------------------------

def _firing_key(f) -> tuple:
    return (repr(f.key), f.window_start, f.window_end, f.fire_index)


def _show_firing(f) -> str:
    if f is None:
        return "(none)"
    return (f"key={f.key!r} [{f.window_start},{f.window_end}) #{f.fire_index} wm={format_watermark(f.fire_watermark)} "
            f"{f.fire_reason} {dict(f.aggregates)} rows={list(f.rows)}")


def diff(name: str, flink: ReplayResult, ref: ReplayResult) -> list[str]:
    rows, cfg, declared = CASES[name]
    problems = []
    a, b = sorted(flink.firings, key=_firing_key), sorted(ref.firings, key=_firing_key)
    if a != b:
        i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        problems.append(f"firings differ ({len(a)} in Flink, {len(b)} in the reference); first difference at #{i}:\n"
                        f"  flink:     {_show_firing(a[i] if i < len(a) else None)}\n"
                        f"  reference: {_show_firing(b[i] if i < len(b) else None)}")
    la = sorted((lr.row.split, lr.row.offset, lr.row, lr.late_watermark) for lr in flink.late_rows)
    lb = sorted((lr.row.split, lr.row.offset, lr.row, lr.late_watermark) for lr in ref.late_rows)
    if la != lb:
        i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        problems.append(f"late rows differ ({len(la)} in Flink, {len(lb)} in the reference); first difference at #{i}:\n"
                        f"  flink:     {la[i][2:] if i < len(la) else '(none)'}\n"
                        f"  reference: {lb[i][2:] if i < len(lb) else '(none)'}")

    def wm_order(c):
        return (c.replay_time, c.scope == "stream", c.split or "")
    wa, wb = sorted(flink.watermarks, key=wm_order), sorted(ref.watermarks, key=wm_order)
    if wa != wb:
        i = next((i for i, (x, y) in enumerate(zip(wa, wb)) if x != y), min(len(wa), len(wb)))
        problems.append(f"watermark changes differ ({len(wa)} in Flink, {len(wb)} in the reference); "
                        f"first difference at #{i}:\n"
                        f"  flink:     {wa[i] if i < len(wa) else '(none)'}\n"
                        f"  reference: {wb[i] if i < len(wb) else '(none)'}")
    if flink.wm_before != ref.wm_before:
        bad = sorted(k for k in set(flink.wm_before) | set(ref.wm_before)
                     if flink.wm_before.get(k) != ref.wm_before.get(k))
        k = bad[0]
        problems.append(f"stream watermark before a row differs for {len(bad)} rows; first {k}: "
                        f"flink {format_watermark(flink.wm_before.get(k))}, reference {format_watermark(ref.wm_before.get(k))}")
    if flink.stream_values != ref.stream_values:
        problems.append(f"stream watermark values differ: flink {flink.stream_values[:10]}..., "
                        f"reference {ref.stream_values[:10]}...")
    if problems:
        problems.insert(0, f"case {name}: {len(rows)} rows, declared={declared}, cfg={cfg}")
    return problems


# -- the tests -----------------------------------------------------------------------------------------

def test_example_a_through_flink(flink_results):
    r = flink_results["A"]
    assert fired(r) == sorted([
        ("k", 0, 10000, 0, "10999", "watermark", 3),
        ("k", 0, 10000, 1, "10999", "late_row", 4),
        ("k", 10000, 20000, 0, "24999", "watermark", 2),
        ("k", 20000, 30000, 0, "null", "end_of_input", 1),
        ("k", 30000, 40000, 0, "null", "end_of_input", 1),
    ])
    assert late(r) == [("p0", 9000, 15999), ("p0", 11000, 24999)]
    assert r.wm_before[("p0", 3)] == 6999  # "after 12000 the watermark is 6999; 2000 joins [0,10000)"
    by_window = {(f.window_start, f.fire_index): f for f in r.firings}
    assert by_window[(0, 0)].aggregates == {"cnt": 3, "total": 1 + 3 + 2}
    assert by_window[(0, 1)].aggregates == {"cnt": 4, "total": 1 + 3 + 2 + 4}


def test_example_b_through_flink(flink_results):
    r = flink_results["B"]
    assert fired(r) == sorted([
        ("a", 0, 4000, 0, "11999", "watermark", 1),
        ("b", 0, 4000, 0, "11999", "watermark", 1),
        ("a", 4000, 8000, 0, "11999", "watermark", 1),
        ("a", 8000, 12000, 0, "11999", "watermark", 1),
        ("a", 12000, 16000, 0, "null", "end_of_input", 2),
        ("a", 16000, 20000, 0, "null", "end_of_input", 1),
    ])
    assert late(r) == [("p1", 3000, 14999)]
    stream = stream_changes(r)
    assert (1400, "1099", False) in stream  # p2 idle at tick 1400: the stream moves to p1's 1099
    assert (1600, "11999", False) in stream  # p1 idle at tick 1600: p0's 11999
    assert (2600, "14999", False) in stream  # p0's row at 2600
    assert max(int(w) for _, w, _ in stream if w != "null") == 14999  # p1 holds it there to the end
    splits = [(c.replay_time, c.split, c.idle) for c in r.watermarks if c.scope == "split" and c.idle]
    assert (1400, "p2", True) in splits and (1600, "p1", True) in splits


def test_example_c_through_flink(flink_results):
    r = flink_results["C"]
    assert fired(r) == sorted([
        ("y", 0, 4000, 0, "9999", "watermark", 1),  # all idle at tick 1600: the stream moves to 9999
        ("x", 8000, 12000, 0, "null", "end_of_input", 1),
    ])
    assert late(r) == [("p1", 2000, 9999)]
    stream = stream_changes(r)
    assert stream[0] == (200, "999", False)
    assert (1600, "null", True) in stream
    assert r.stream_values == [999, 9999]


def test_processing_time_issue16_repro_through_flink(flink_results):
    """Flink's processing-time WindowOperator on the replay clock: every window with rows fires at e - 1, p1's
    silence after its first row holds nothing back, and nothing else comes out (no watermarks, no late rows)."""
    r = flink_results["pt_issue16_repro"]
    assert fired(r) == sorted([("a", s, s + 1000, 0, str(s + 999), "watermark", 4) for s in range(0, 5000, 1000)]
                              + [("b", 0, 1000, 0, "999", "watermark", 1)])
    assert not r.late_rows and not r.watermarks and not r.wm_before


def test_processing_time_edges_through_flink(flink_results):
    """A row at e - 1 is in [s, e), a row at e in the next window (the timer at e - 1 is due only once the clock
    has passed it); windows fire across a gap with no later row; flush fires the window open at the range end."""
    hold = sorted([("k0", 300, 1300, 0, "1299", "watermark", 2), ("k1", 300, 1300, 0, "1299", "watermark", 2),
                   ("k0", 1300, 2300, 0, "2299", "watermark", 2), ("k1", 1300, 2300, 0, "2299", "watermark", 2),
                   ("k0", 2300, 3300, 0, "3299", "watermark", 1), ("k1", 6300, 7300, 0, "7299", "watermark", 1),
                   ("k0", 7300, 8300, 0, "8299", "watermark", 1)])
    assert fired(flink_results["pt_tumbling_edges_hold"]) == hold
    assert fired(flink_results["pt_tumbling_edges_flush"]) == sorted(
        hold + [("k1", 8300, 9300, 0, "null", "end_of_input", 1)])
    # sessions, gap 700: a row at e - 1 joins (and moves the timer), a row at e starts a new session
    hold = sorted([("s", 1000, 3098, 0, "3097", "watermark", 3), ("s", 3098, 3798, 0, "3797", "watermark", 1),
                   ("s", 3799, 4500, 0, "4499", "watermark", 2), ("s", 5000, 6499, 0, "6498", "watermark", 3),
                   ("s", 6500, 7200, 0, "7199", "watermark", 1), ("u", 1000, 1700, 0, "1699", "watermark", 1),
                   ("u", 1700, 3100, 0, "3099", "watermark", 3), ("u", 4000, 4700, 0, "4699", "watermark", 1)])
    assert fired(flink_results["pt_session_edges_hold"]) == hold
    assert fired(flink_results["pt_session_edges_flush"]) == sorted(
        hold + [("s", 8000, 8700, 0, "null", "end_of_input", 1)])


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_reference_equals_flink_on_examples(flink_results, name):
    problems = diff(name, flink_results[name], reference(name))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", [n for n, *_ in TARGETED + GENERATED + PROCESSING + FILTERED + SHAPES])
def test_reference_equals_flink(flink_results, name):
    problems = diff(name, flink_results[name], reference(name))
    assert not problems, "\n".join(problems)


PARTITIONED = [n for n, _, cfg, _ in TARGETED + GENERATED + PROCESSING + FILTERED + SHAPES
               if cfg.replay.start_ms is not None and cfg.replay.end_ms is not None
               and cfg.replay.end_ms - cfg.replay.start_ms > 2]


def partitioned_reference(name: str) -> tuple[ReplayResult, list[int]]:
    """The reference replaying the range as consecutive partitions [a,b) [b,c) [c,d), state carried (`hold`) between
    them, and the configured end of input after the last one (SEMANTICS §6). Cuts: at a row's arrival time (ties
    on both sides of the cut), on a tick, or anywhere."""
    rows, cfg, declared = CASES[name]
    start, end, in_range = replay_range_of(rows, cfg)
    rng = random.Random(name)
    interval = cfg.watermark.interval_ms or 1
    cuts = set()
    for _ in range(2):
        choice = rng.random()
        if in_range and choice < 0.4:
            cut = rng.choice(in_range).arrival_time
        elif choice < 0.7:
            cut = (rng.randint(start, end - 1) // interval) * interval
        else:
            cut = rng.randint(start, end - 1)
        if start < cut < end:
            cuts.add(cut)
    bounds = [start, *sorted(cuts), end]
    replayer = Replayer(cfg, declared_splits_of(in_range, cfg, declared))
    for lo, hi in zip(bounds, bounds[1:]):
        replayer.replay_range([r for r in in_range if lo <= r.arrival_time < hi], lo, hi)
    return replayer.finish(), bounds


@pytest.mark.parametrize("name", PARTITIONED)
def test_partitioned_reference_equals_one_flink_run(flink_results, name):
    """`hold` between partitions carries everything: Flink reading the whole range at once is the oracle."""
    result, bounds = partitioned_reference(name)
    problems = diff(name, flink_results[name], result)
    assert not problems, f"partitions {bounds}\n" + "\n".join(problems)


def test_generated_cases_cover_every_feature():
    """The differential cases must exercise every option the semantics has (guards the generator itself)."""
    cfgs = [cfg for _, _, cfg, _ in GENERATED + TARGETED]
    seen = {
        "window": {c.window.type for c in cfgs},
        "offset": {c.window.offset_ms > 0 for c in cfgs if c.window.type != "session"},
        "strategy": {c.watermark.strategy for c in cfgs},
        "emit": {c.watermark.emit for c in cfgs},
        "idle": {c.watermark.idle_timeout_ms is not None for c in cfgs},
        "silence": {c.watermark.advance_after_silence_ms is not None for c in cfgs},
        "side": {bool(c.source.side_inputs) for c in cfgs},
        "lateness": {c.window.allowed_lateness_ms > 0 for c in cfgs},
        "eoi": {c.replay.end_of_input for c in cfgs},
        "declared": {c.source.splits is not None for c in cfgs},
    }
    assert seen == {
        "window": {"tumbling", "sliding", "session"}, "offset": {True, False},
        "strategy": {"bounded_out_of_orderness", "sql", "monotonous"}, "emit": {"periodic", "per_event"},
        "idle": {True, False}, "silence": {True, False}, "side": {True, False}, "lateness": {True, False},
        "eoi": {"flush", "hold"}, "declared": {True, False},
    }
    sizes = [len(rows) for _, rows, _, _ in GENERATED]
    assert max(sizes) >= 1000 and min(sizes) <= 50
    assert max(len({r.split for r in rows}) for _, rows, _, _ in GENERATED) >= 8


def test_some_generated_cases_reach_the_interesting_states(flink_results):
    """Not vacuous: across the generated cases Flink produced late rows, late firings, all-idle streams,
    end-of-input firings and empty declared splits."""
    results = [flink_results[n] for n, *_ in GENERATED + TARGETED]
    assert sum(len(r.late_rows) for r in results) > 0
    assert any(f.fire_reason == "late_row" for r in results for f in r.firings)
    assert any(f.fire_reason == "end_of_input" for r in results for f in r.firings)
    assert any(c.scope == "stream" and c.idle for r in results for c in r.watermarks)
    assert any(c.scope == "split" and c.idle for r in results for c in r.watermarks)
    assert any(any(f.fire_index > 0 for f in r.firings) for r in results)
    empty = [n for n, rows, cfg, declared in GENERATED
             if set(declared or cfg.source.splits or ()) - {r.split for r in rows}]
    assert empty, "no generated case has a declared split without rows"


def test_rows_dropped_after_the_watermark_assigner_drive_flink_s_watermarks(flink_results):
    """In Flink's own job the filter's dropped rows still move the watermark (p0/1 makes p0/2 late and fires
    [0, 4000) early) and keep a split active (p1 never idles, nothing is late); a dropped row is never late."""
    moves = flink_results["filter_moves"]
    assert [(lr.row.offset, lr.late_watermark) for lr in moves.late_rows] == [(2, 8999)]
    assert [(f.window_start, f.fire_watermark, f.aggregates["cnt"]) for f in moves.firings][0] == (0, 8999, 1)
    active = flink_results["filter_keeps_active"]
    assert not active.late_rows and not any(c.idle for c in active.watermarks)
    flushed = [(name, rows) for name, rows, cfg, _ in FILTERED if cfg.replay.end_of_input == "flush"]
    assert len(flushed) > 5
    for name, rows in flushed:  # after a flush every row Flink windowed is in a firing
        _, _, in_range = replay_range_of(rows, CASES[name][1])
        dropped = {(r.split, r.offset) for r in in_range} - {k for f in flink_results[name].firings for k in f.rows} \
            - {(lr.row.split, lr.row.offset) for lr in flink_results[name].late_rows}
        assert dropped == set(reference(name).filtered) and dropped, name


def test_shape_cases_reach_cumulate_late_firings_and_having(flink_results):
    """Not vacuous: Flink's cumulate windows fired late and on time, windows of one start with several ends; the
    keyless cases fired; HAVING dropped some of Flink's firings and kept others."""
    cumulate = [flink_results[n] for n, _, cfg, _ in SHAPES if cfg.window.type == "cumulate"]
    fired = [f for r in cumulate for f in r.firings]
    assert any(f.fire_reason == "late_row" for f in fired) and any(f.fire_reason == "watermark" for f in fired)
    assert len({(f.window_start, f.window_end) for f in fired}) > len({f.window_start for f in fired})
    assert sum(len(r.late_rows) for r in cumulate) > 0
    assert all(f.key is None for n, _, cfg, _ in SHAPES if cfg.source.keyless for f in flink_results[n].firings)
    having = [(n, rows, cfg, declared) for n, rows, cfg, declared in SHAPES if cfg.having is not None]
    assert having and any(flink_results[n].firings for n, *_ in having)
    unfiltered = [replay(rows, dataclasses.replace(cfg, having=None), declared_splits=declared)
                  for _, rows, cfg, declared in having]
    assert sum(len(r.firings) for r in unfiltered) > sum(len(flink_results[n].firings) for n, *_ in having)
