"""Logs where the rows a job's filter drops are the ones that move the watermark or keep a split from going idle
(docs/semantics.md, "Row filter"): shared by the reference model's, the engine's and the Flink harness's tests.

Each case: (name, rows, cfg). The filter is `value > 0` (rows with value 0 are dropped) unless said otherwise.
"""
from __future__ import annotations

import random

from event_replay.semantics.config import JobConfig, parse_config, to_raw
from event_replay.semantics.model import LogRow
from strategies import config

KEEP_POSITIVE = "value > 0"


def with_filter(cfg: JobConfig, text: str | None) -> JobConfig:
    """The config with the filter `text` (None: without one), validated as a file would be."""
    raw = to_raw(cfg)
    raw.pop("filter", None)
    return parse_config(raw if text is None else {**raw, "filter": text})


def row(split: str, offset: int, arrival: int, event: int, value: int, key: str = "k") -> LogRow:
    return LogRow(split, offset, arrival, event, key, {"value": value})


# The aggregates the Flink harness computes (tests/flink/flink_harness.py).
AGGS = {"cnt": "count(*)", "total": "sum(value)"}

# A dropped row (p0/1, event time 9000) moves p0's watermark to 8999 at the tick of 1000: the window [0, 4000) fires
# with p0/0 alone and p0/2 is late. p0/3 would be late too, but it is dropped: counted as filtered, never late.
MOVES = [row("p0", 0, 0, 1000, 1), row("p0", 1, 500, 9000, 0), row("p0", 2, 1500, 2000, 1),
         row("p0", 3, 1600, 1500, 0), row("p0", 4, 2500, 9500, 1)]
MOVES_CFG = config(watermark={"max_out_of_orderness": 0, "interval": 1000}, window={"size": 4000}, aggregations=AGGS)

# p1's rows are all dropped, yet they arrive every 400 ms: p1 stays active and holds the stream at its low watermark,
# so nothing fires before the flush and p0/4 (event time 2500) is windowed. Without those rows p1 would go idle and
# p0 alone would fire [0, 4000) early, making p0/4 late.
KEEPS_ACTIVE = ([row("p0", i, a, e, 1) for i, (a, e) in enumerate([(0, 1000), (1000, 5000), (2000, 9000),
                                                                   (3000, 13000), (3500, 2500)])]
                + [row("p1", i, 400 * i, 100 + i, 0) for i in range(10)])
KEEPS_ACTIVE_CFG = config(source={"splits": ["p0", "p1"]},
                          watermark={"max_out_of_orderness": 0, "interval": 500, "idle_timeout": 1000},
                          window={"size": 4000}, aggregations=AGGS)

# Sessions and allowed lateness: a dropped row with a far event time moves the watermark past a session, whose next
# row then comes as a late firing (within the lateness) or late (after it).
SESSIONS = [row("p0", 0, 0, 1000, 1), row("p0", 1, 100, 1500, 1), row("p0", 2, 300, 6000, 0),
            row("p0", 3, 700, 2000, 1), row("p0", 4, 900, 30000, 0), row("p0", 5, 1300, 2500, 1),
            row("p0", 6, 1500, 31000, 1)]
SESSIONS_CFG = config(watermark={"max_out_of_orderness": 0, "interval": 400},
                      window={"type": "session", "gap": 1000, "allowed_lateness": 1000}, aggregations=AGGS)


def random_filtered(seed: int) -> tuple[list[LogRow], JobConfig]:
    """A random log in which about half the rows are dropped (value % 2 = 0), among them rows with far event times
    (they move the watermark) and whole stretches of one split (it stays active only through dropped rows)."""
    rng = random.Random(seed)
    rows, arrival = [], 0
    offsets = {"p0": 0, "p1": 0, "p2": 0}
    for _ in range(rng.randint(30, 80)):
        arrival += rng.choice([0, 50, 150, 400, 900])
        split = rng.choice(["p0", "p1", "p2"])
        silent_stretch = split == "p2" and arrival % 3000 < 1500
        value = rng.choice([0, 2, 4]) if silent_stretch else rng.randint(0, 9)
        event = arrival + rng.choice([-2500, -600, -50, 0, 300, 4000 if value % 2 == 0 else 0])
        rows.append(row(split, offsets[split], arrival, max(event, 0), value, rng.choice(["a", "b"])))
        offsets[split] += 1
    window = rng.choice([{"type": "tumbling", "size": 2000}, {"type": "sliding", "size": 3000, "slide": 1000},
                         {"type": "session", "gap": 700}])
    cfg = config(source={"splits": ["p0", "p1", "p2"]},
                 watermark={"max_out_of_orderness": rng.choice([0, 300]), "interval": rng.choice([200, 500]),
                            "idle_timeout": rng.choice([600, 1500])},
                 window={**window, "allowed_lateness": rng.choice([0, 500])},
                 aggregations=AGGS)
    return rows, with_filter(cfg, "value % 2 = 1")


CASES = [("moves", MOVES, with_filter(MOVES_CFG, KEEP_POSITIVE)),
         ("keeps_active", KEEPS_ACTIVE, with_filter(KEEPS_ACTIVE_CFG, KEEP_POSITIVE)),
         ("sessions", SESSIONS, with_filter(SESSIONS_CFG, KEEP_POSITIVE)),
         *[(f"random_{seed}", *random_filtered(seed)) for seed in (1, 2, 3, 4)]]
