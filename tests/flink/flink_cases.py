"""The Flink differential cases: SEMANTICS §8's examples A-C, targeted cases, generated logs and processing-time
cases, each (name, rows, config, declared splits); shared by the reference-vs-Flink and `replay run`-vs-Flink suites."""
from __future__ import annotations

import random
from typing import Any

from event_replay.semantics.config import JobConfig, parse_config
from event_replay.semantics.durations import NEG_INF, POS_INF
from event_replay.semantics.model import LogRow, ReplayResult
from filter_cases import CASES as FILTER_CASES
from filter_cases import MOVES, with_filter
from strategies import random_case, random_log


AGGS = {"cnt": "count(*)", "total": "sum(value)"}



def format_watermark(ms: int | None) -> str:
    """A watermark or instant as text: null, -inf, +inf or the epoch ms."""
    if ms is None:
        return "null"
    if ms == NEG_INF:
        return "-inf"
    if ms == POS_INF:
        return "+inf"
    return str(ms)

def config(**sections: Any) -> JobConfig:
    raw: dict[str, Any] = {"source": {"path": "unused"}, "watermark": {}, "window": {"type": "tumbling", "size": 4000},
                           "aggregations": dict(AGGS), "replay": {}, "output": {"path": "unused"}}
    for name, values in sections.items():
        if name == "window":
            raw["window"] = dict(values)
        elif isinstance(values, str):  # a root key: filter, having
            raw[name] = values
        else:
            raw[name].update(values)
    return parse_config(raw)


# -- SEMANTICS §8 examples ----------------------------------------------------------------------------

def example_a():
    cfg = config(watermark={"max_out_of_orderness": "5s", "emit": "per_event"},
                 window={"type": "tumbling", "size": "10s", "allowed_lateness": "3s"})
    times = [1000, 3000, 12000, 2000, 16000, 4000, 21000, 9000, 30000, 11000]
    return [LogRow("p0", i, 1000 + i, t, "k", {"value": t // 1000}) for i, t in enumerate(times)], cfg, None


def example_b():
    cfg = config(source={"splits": ["p0", "p1", "p2"]},
                 watermark={"max_out_of_orderness": 0, "interval": "200ms", "idle_timeout": "1s"},
                 replay={"start": 100, "end": 4000, "end_of_input": "flush"})
    spec = [("p0", 100, 1000), ("p1", 150, 1100), ("p0", 300, 5000), ("p0", 700, 9000), ("p0", 1500, 12000),
            ("p0", 2600, 15000), ("p1", 2700, 3000), ("p0", 2800, 16000)]
    rows = [LogRow(s, i, a, e, "a" if s == "p0" else "b", {"value": e // 1000}) for i, (s, a, e) in enumerate(spec)]
    return rows, cfg, None


def example_c():
    cfg = config(watermark={"max_out_of_orderness": 0, "interval": 200, "idle_timeout": 1000},
                 replay={"start": 100, "end": 4000})
    rows = [LogRow("p0", 0, 100, 10000, "x", {"value": 10}), LogRow("p1", 0, 150, 1000, "y", {"value": 1}),
            LogRow("p1", 1, 3000, 2000, "y", {"value": 2})]
    return rows, cfg, None


def fired(result: ReplayResult) -> list[tuple]:
    return sorted((str(f.key), f.window_start, f.window_end, f.fire_index, format_watermark(f.fire_watermark), f.fire_reason,
                   f.aggregates["cnt"]) for f in result.firings)


def late(result: ReplayResult) -> list[tuple]:
    return sorted((lr.row.split, lr.row.event_time, lr.late_watermark) for lr in result.late_rows)


def stream_changes(result: ReplayResult) -> list[tuple]:
    return [(c.replay_time, format_watermark(c.watermark), c.idle) for c in result.watermarks if c.scope == "stream"]


# -- generated cases ----------------------------------------------------------------------------------

WINDOWS = [
    {"type": "tumbling", "size": 4000},
    {"type": "tumbling", "size": 2000, "offset": 300},
    {"type": "tumbling", "size": 10000, "offset": 2500},
    {"type": "sliding", "size": 4000, "slide": 1000},
    {"type": "sliding", "size": 2000, "slide": 500, "offset": 250},
    {"type": "sliding", "size": 3000, "slide": 3000, "offset": 100},  # slide == size: tumbling through the sliding path
    {"type": "session", "gap": 1000},
    {"type": "session", "gap": 3000},
    {"type": "session", "gap": 200},
]
STRATEGIES = [("bounded_out_of_orderness", 1000), ("bounded_out_of_orderness", 0), ("sql", 1000), ("sql", 0),
              ("monotonous", None), ("bounded_out_of_orderness", 3000), ("sql", 200)]
LATENESS = [0, 0, 500, 3000]


def generated_config(rng: random.Random, n: int, rows: list[LogRow], splits: list[str]) -> tuple[JobConfig, Any]:
    """Case n: every dimension cycles through all its values (so small n still covers everything), the rest random."""
    strategy, delay = STRATEGIES[n % len(STRATEGIES)]
    wm: dict[str, Any] = {"strategy": strategy}
    if delay is not None:
        wm["max_out_of_orderness"] = delay
    if n % 5 == 4:
        wm["emit"] = "per_event"
    else:
        wm["emit"] = "periodic"
        wm["interval"] = [200, 100, 500, 200][n % 4]
        if n % 3 != 0:
            wm["idle_timeout"] = [400, 1000, 2500, 100][(n // 3) % 4]
        if n % 4 == 1:
            wm["advance_after_silence"] = [0, 300, 1500][(n // 4) % 3]
    window = dict(WINDOWS[n % len(WINDOWS)])
    window["allowed_lateness"] = LATENESS[(n // 2) % len(LATENESS)]
    source: dict[str, Any] = {}
    declared = None
    if n % 2 == 0:
        source["splits"] = splits  # declared explicitly: splits without rows exist and hold the watermark back
    elif rng.random() < 0.5:
        declared = splits  # declared by the caller instead of the config
    if n % 7 == 3:
        source["side_inputs"] = ["rules"]
    replay_cfg: dict[str, Any] = {"end_of_input": "hold" if n % 3 == 2 else "flush"}
    if rows and n % 4 != 3:
        first, last = min(r.arrival_time for r in rows), max(r.arrival_time for r in rows)
        shape = (n // 4) % 4
        replay_cfg["start"] = max(0, first - [0, 150, 1000, 0][shape])
        # a long quiet tail lets every split go idle (all-idle); a cut in the middle drops the later rows
        replay_cfg["end"] = [last + 1, last + 12000, last + 3000, max(replay_cfg["start"] + 1, (first + last) // 2)][shape]
    cfg = config(source=source, watermark=wm, window=window, replay=replay_cfg)
    return cfg, declared


def side_input_rows(rng: random.Random, rows: list[LogRow]) -> list[LogRow]:
    """Some rows on the side input too: they go into windows like any row, but never move its +inf watermark."""
    if not rows:
        return []
    out, offset = [], 0
    for r in rng.sample(rows, k=min(len(rows), rng.randint(1, 8))):
        offset += 1
        out.append(LogRow("rules", offset, r.arrival_time, r.event_time - rng.randint(0, 5000), "rule",
                          {"value": rng.randint(0, 9)}))
    return out


def generated_cases(count: int, *, big_every: int = 8, seed: int = 20240) -> list[tuple[str, list, JobConfig, Any]]:
    cases = []
    for n in range(count):
        rng = random.Random(seed + n)
        if n % big_every == 5:  # 5 mod 8: the big cases meet every emit/window/side-input choice above
            # big: a few thousand rows over 8 to 12 splits (redraw until the log has that many splits)
            while True:
                rows, splits = random_log(rng, max_rows=3000, max_splits=12, max_keys=6, base=rng.randint(0, 10**6))
                if len(splits) >= 8 and len(rows) >= 1000:
                    break
        else:
            while True:  # a few rows at least, except for one empty log
                rows, splits = random_log(rng, max_rows=rng.choice([40, 150, 400]), max_splits=rng.choice([2, 5, 8]),
                                          max_keys=4, base=rng.randint(0, 10**6))
                if len(rows) >= 5 or (n == 6 and not rows):
                    break
        cfg, declared = generated_config(rng, n, rows, splits)
        if cfg.source.side_inputs and n % 2 == 1:
            rows = rows + side_input_rows(rng, rows)
        cases.append((f"gen{n:03d}", rows, cfg, declared))
    return cases


def targeted_cases() -> list[tuple[str, list, JobConfig, Any]]:
    """Shapes that random logs hit rarely."""
    out = []
    # every split stops early and the range runs on: all splits idle, the stream jumps to the largest watermark
    rows = [LogRow(f"p{s}", i, 1000 + 37 * i + s, 1000 + 37 * i + 400 * s + (i % 5) * 90, f"k{i % 3}",
                   {"value": i}) for s in range(3) for i in range(30 + 10 * s)]
    out.append(("all_idle_tail", rows, config(watermark={"max_out_of_orderness": 200, "interval": 100,
                                                         "idle_timeout": 500},
                                              window={"type": "tumbling", "size": 1000, "allowed_lateness": 500},
                                              replay={"end": 9000}), None))
    # an idle split comes back with a lower watermark: it holds the stream where it is until it catches up
    rows = [LogRow("p0", i, 100 * i, 100 * i + 50, "a", {"value": 1}) for i in range(1, 80)]
    rows += [LogRow("p1", i, 200 + 4000 * (i // 2) + 10 * i, 500 * i, "b", {"value": 2}) for i in range(6)]
    out.append(("idle_comeback", rows, config(watermark={"max_out_of_orderness": 0, "interval": 200,
                                                         "idle_timeout": 1000},
                                              window={"type": "sliding", "size": 2000, "slide": 500,
                                                      "allowed_lateness": 1500}), None))
    # ties: many rows with the same arrival time across splits, on tick boundaries
    rows = [LogRow(f"s{i % 4}", i, 1000 * (i // 12), 1000 * (i // 12) - 300 * (i % 7), f"k{i % 2}", {"value": i})
            for i in range(150)]
    out.append(("ties_on_ticks", rows, config(watermark={"strategy": "sql", "max_out_of_orderness": 500,
                                                         "interval": 500, "idle_timeout": 1000},
                                              window={"type": "session", "gap": 700, "allowed_lateness": 2000}),
                None))
    # side input with idleness: when every real split is idle only the side input is active
    rows = [LogRow("p0", i, 300 * i, 300 * i, "a", {"value": 1}) for i in range(20)]
    rows += [LogRow("rules", 0, 50, 0, "r", {"value": 5})]
    out.append(("side_input_all_real_idle", rows,
                config(source={"side_inputs": ["rules"]},
                       watermark={"max_out_of_orderness": 0, "interval": 200, "idle_timeout": 600},
                       window={"type": "tumbling", "size": 1000}, replay={"end": 12000}), None))
    # silence advance with per-split idleness, hold
    rows = [LogRow(f"p{i % 2}", i, 250 * i + (3000 if i > 20 else 0), 250 * i, "k", {"value": i}) for i in range(40)]
    out.append(("silence_and_idle_hold", rows,
                config(watermark={"max_out_of_orderness": 100, "interval": 100, "idle_timeout": 2500,
                                  "advance_after_silence": 300},
                       window={"type": "tumbling", "size": 1000, "offset": 100, "allowed_lateness": 200},
                       replay={"end_of_input": "hold"}), None))
    # ingestion time: the event time is the arrival time
    rows = [LogRow(f"p{i % 3}", i, 130 * i + (i % 4) * 7, 0, f"k{i % 2}", {"value": i}) for i in range(60)]
    out.append(("ingestion_time", rows,
                config(watermark={"strategy": "monotonous", "interval": 200, "idle_timeout": 300},
                       window={"type": "sliding", "size": 1000, "slide": 250, "time": "ingestion"}), None))
    return out


def processing_time_cases() -> list[tuple[str, list, JobConfig, Any]]:
    """window.time processing (docs/semantics.md, "Time notions"): Flink's WindowOperator with processing-time
    assigners and ProcessingTimeTrigger, its processing-time service driven by the replay clock (tests/flink/README.md).
    The watermark section does not apply; the windows fire from their timers at e - 1, rows at T before timers at T."""
    def pt(window: dict, **replay: Any) -> JobConfig:
        return config(window={**window, "time": "processing"}, replay=dict(replay))
    out = []
    # The issue-16 repro: p0 a row every 250 ms for 5 s, p1 one row at the start and then silent; tumbling 1 s,
    # range 7 s, hold: every window with rows fires (p1's silence holds nothing back).
    rows = [LogRow("p0", i, 250 * i, 0, "a", {"value": i}) for i in range(20)]
    rows.append(LogRow("p1", 0, 0, 0, "b", {"value": 100}))
    out.append(("pt_issue16_repro", rows,
                pt({"type": "tumbling", "size": "1s"}, start=0, end=7000, end_of_input="hold"), None))
    # Tumbling with an offset: rows exactly at e - 1 and at e (ties across splits), a gap of several windows with
    # no rows at all (the open windows fire with no later row), a window still open at the range end (flush).
    edges = [310, 300, 1299, 1299, 1300, 1300, 1301, 2299, 2300, 7299, 7300, 9050, 9299]
    rows = [LogRow(f"p{i % 3}", i, t, 0, f"k{i % 2}", {"value": i}) for i, t in enumerate(edges)]
    for eoi in ("flush", "hold"):
        out.append((f"pt_tumbling_edges_{eoi}", rows,
                    pt({"type": "tumbling", "size": 1000, "offset": 300}, start=0, end=9299, end_of_input=eoi), None))
    # Sliding: the slide does not divide the size, an offset; rows on window edges, a silent split and a gap.
    times = [0, 299, 300, 1299, 1300, 2799, 2800, 3299, 3300, 3301, 4100, 9800, 9801, 12299]
    rows = [LogRow("p0", i, t, 0, f"k{i % 3}", {"value": i}) for i, t in enumerate(times)]
    rows += [LogRow("p1", 0, 500, 0, "k0", {"value": 50})]  # p1: one row, then silent
    out.append(("pt_sliding_not_dividing", rows,
                config(source={"splits": ["p0", "p1", "p2"]},  # p2 declared, never a row
                       window={"type": "sliding", "size": 2500, "slide": 1000, "offset": 300, "time": "processing"},
                       replay={"start": 0, "end": 12300, "end_of_input": "hold"}), None))
    # Sessions on arrival time (gap 700): the next row at gap - 1 after the last (e - 1: joins), at gap (e: the
    # session fired just before, a new one starts), at gap + 1; two keys; the last session is open at the end.
    times = [1000, 1699, 2398, 3098, 3799, 3800, 5000, 5100, 5799, 6500, 8000]
    rows = [LogRow("p0", i, t, 0, "s", {"value": i}) for i, t in enumerate(times)]
    rows += [LogRow("p1", i, t, 0, "u", {"value": 10 + i}) for i, t in enumerate([1000, 1700, 2399, 2400, 4000])]
    for eoi in ("flush", "hold"):
        out.append((f"pt_session_edges_{eoi}", rows,
                    pt({"type": "session", "gap": 700}, start=500, end=8200, end_of_input=eoi), None))
    # Random logs (splits falling silent, bursts, long gaps) through every processing-time window shape, with and
    # without an explicit range (a cut in the middle leaves windows open: hold carries them, flush fires them).
    shapes = [{"type": "tumbling", "size": 1000}, {"type": "tumbling", "size": 2000, "offset": 700},
              {"type": "sliding", "size": 2000, "slide": 750, "offset": 100}, {"type": "sliding", "size": 3000, "slide": 1000},
              {"type": "session", "gap": 400}, {"type": "session", "gap": 1500}]
    for n in range(12):
        rng = random.Random(16_001 + n)
        while True:  # a few rows at least
            rows, splits = random_log(rng, max_rows=rng.choice([30, 120, 300]), max_splits=4, max_keys=3,
                                      base=rng.randint(0, 10**6))
            if len(rows) >= 8:
                break
        replay_cfg: dict[str, Any] = {"end_of_input": "hold" if n % 2 else "flush"}
        if rows and n % 3:
            first, last = min(r.arrival_time for r in rows), max(r.arrival_time for r in rows)
            replay_cfg["start"] = first - rng.randint(0, 500)
            replay_cfg["end"] = last + 1 + rng.randint(0, 5000) if n % 3 == 1 else (first + last) // 2
        out.append((f"pt_random{n:02d}", rows,
                    config(source={"splits": splits}, window={**shapes[n % len(shapes)], "time": "processing"},
                           replay=replay_cfg), None))
    return out


def lead_random_cases(seeds: range) -> list[tuple[str, list, JobConfig, Any]]:
    """The shared generator's own config distribution (tests/strategies.py), for breadth beyond the matrix above."""
    cases = []
    for seed in seeds:
        c = random_case(seed)
        cases.append((f"rc{seed:03d}", list(c.rows), c.cfg, c.declared_splits))
    return cases


def filtered_cases() -> list[tuple[str, list, JobConfig, Any]]:
    """A job with a filter between the watermark assigner and the window (docs/semantics.md, "Row filter"): the logs
    of tests/filter_cases.py, where the dropped rows move the watermark and keep a split active; the same under
    per-event emission, processing time and an explicit range (the partitioned check cuts it); and the shared
    generator's cases with half their rows dropped."""
    out = [(f"filter_{name}", rows, cfg, None) for name, rows, cfg in FILTER_CASES]
    keep = "value > 0"
    out.append(("filter_per_event", MOVES, with_filter(config(
        watermark={"max_out_of_orderness": 0, "emit": "per_event", "interval": 0},
        window={"type": "tumbling", "size": 4000}), keep), None))
    out.append(("filter_processing_time", MOVES, with_filter(config(
        window={"type": "tumbling", "size": 1000, "time": "processing"}), keep), None))
    out.append(("filter_ranged_hold", MOVES, with_filter(config(
        watermark={"max_out_of_orderness": 0, "interval": 500},
        window={"type": "sliding", "size": 4000, "slide": 1000, "allowed_lateness": 1000},
        replay={"start": 0, "end": 2400, "end_of_input": "hold"}), keep), None))
    for seed in range(8):
        c = random_case(900 + seed)
        out.append((f"filter_rc{seed}", list(c.rows), with_filter(c.cfg, "value % 2 = 1"), c.declared_splits))
    return out


GENERATED = generated_cases(90) + lead_random_cases(range(40))
FILTERED = filtered_cases()
TARGETED = targeted_cases()
PROCESSING = processing_time_cases()
EXAMPLES = {"A": example_a(), "B": example_b(), "C": example_c()}
ALL = [(name, *case) for name, case in EXAMPLES.items()] + TARGETED + GENERATED + PROCESSING + FILTERED
