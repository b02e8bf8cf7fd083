"""Generated logs and configs for property and differential tests.

`random_case(seed)` is plain `random`, so the Flink harness and hypothesis draw from the same space;
`cases()` is the hypothesis strategy over it. Logs have bursts, silences, ties in arrival time, stragglers,
declared splits with no rows, and splits that stop early.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from event_replay.semantics.config import JobConfig, parse_config
from event_replay.semantics.model import LogRow


def config(**sections) -> JobConfig:
    """A small job config for hand-written cases: tumbling 4 s windows, count(*); `sections` override whole keys
    of a section (a `window` with a `type` replaces the window)."""
    raw = {"source": {"path": "unused"}, "window": {"type": "tumbling", "size": 4000},
           "aggregations": {"cnt": "count(*)"}, "output": {"path": "unused"}}
    for name, values in sections.items():
        if name == "window" and "type" in values:
            raw["window"] = {}
        raw.setdefault(name, {}).update(values)
    return parse_config(raw)


@dataclass(frozen=True)
class Case:
    seed: int
    rows: tuple[LogRow, ...]
    cfg: JobConfig
    declared_splits: tuple[str, ...]

    def __repr__(self) -> str:  # short, so a failing example is readable
        return f"Case(seed={self.seed}, rows={len(self.rows)}, cfg={self.cfg})"


def random_log(rng: random.Random, *, max_rows: int = 120, max_splits: int = 5, max_keys: int = 4,
               base: int = 0) -> tuple[list[LogRow], list[str]]:
    """Rows and the declared splits (some declared splits may have no rows)."""
    n_splits = rng.randint(1, max_splits)
    splits = [f"p{i}" for i in range(n_splits)]
    empty = {s for s in splits if n_splits > 1 and rng.random() < 0.15}
    keys = [f"k{i}" for i in range(rng.randint(1, max_keys))]
    rows: list[LogRow] = []
    n_rows = rng.randint(0, max_rows)
    for split in splits:
        if split in empty:
            continue
        count = max(0, int(n_rows / max(1, n_splits - len(empty)) * rng.uniform(0.3, 1.7)))
        arrival = base + rng.randint(0, 3000)
        stop_after = rng.randint(1, max(1, count)) if rng.random() < 0.3 else count  # a split that falls silent
        lag = rng.choice([0, 50, 500, 2000])
        offset = rng.randint(0, 5)
        for _ in range(min(count, stop_after)):
            offset += rng.choice([1, 1, 1, 2, 7])  # strictly increasing, with gaps
            step = rng.choice([0, 0, 10, 50, 100, 200, 400]) if rng.random() < 0.85 else rng.randint(1000, 6000)
            arrival += step
            if rng.random() < 0.08:
                event = arrival - rng.randint(3000, 15000)  # straggler
            else:
                event = arrival - rng.randint(0, lag) + rng.choice([0, 0, 3000])
            rows.append(LogRow(split=split, offset=offset, arrival_time=arrival,
                               event_time=max(0, event), key=rng.choice(keys),
                               payload={"value": rng.randint(-5, 100)}))
    return rows, splits


def random_config_raw(rng: random.Random, rows: list[LogRow], splits: list[str]) -> dict[str, Any]:
    emit = rng.choice(["periodic", "periodic", "periodic", "per_event"])
    strategy = rng.choice(["bounded_out_of_orderness", "sql", "monotonous"])
    wm: dict[str, Any] = {"strategy": strategy, "emit": emit}
    if strategy != "monotonous":
        wm["max_out_of_orderness"] = rng.choice([0, 1, 200, 1000, 3000])
    if emit == "periodic":
        wm["interval"] = rng.choice([100, 200, 500])
        if rng.random() < 0.6:
            wm["idle_timeout"] = rng.choice([100, 400, 1000, 2500])
        if rng.random() < 0.3:
            wm["advance_after_silence"] = rng.choice([0, 300, 1500])
    wtype = rng.choice(["tumbling", "tumbling", "sliding", "session"])
    window: dict[str, Any] = {"type": wtype, "allowed_lateness": rng.choice([0, 0, 500, 2000, 6000])}
    if wtype == "session":
        window["gap"] = rng.choice([300, 1000, 3000])
    else:
        window["size"] = rng.choice([1000, 2000, 4000, 10000])
        if wtype == "sliding":
            window["slide"] = rng.choice([s for s in (500, 1000, 2000) if s <= window["size"]])
            window["offset"] = rng.choice([0, 0, window["slide"] // 2])
        else:
            window["offset"] = rng.choice([0, 0, 300])
    source: dict[str, Any] = {"path": "unused"}
    if rng.random() < 0.5:
        source["splits"] = splits  # declared explicitly: empty splits hold the watermark back
    if rng.random() < 0.1:
        source["side_inputs"] = ["rules"]
    replay: dict[str, Any] = {"end_of_input": rng.choice(["flush", "flush", "hold"])}
    if rows and rng.random() < 0.5:
        first = min(r.arrival_time for r in rows)
        last = max(r.arrival_time for r in rows)
        replay["start"] = max(0, first - rng.choice([0, 0, 150, 1000]))
        replay["end"] = last + rng.choice([1, 100, 3000, 10000]) if rng.random() < 0.8 else max(replay["start"] + 1,
                                                                                              (first + last) // 2)
    return {"source": source, "watermark": wm, "window": window,
            "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
            "replay": replay, "output": {"path": "unused"}}


def random_case(seed: int, **log_kwargs: Any) -> Case:
    rng = random.Random(seed)
    rows, splits = random_log(rng, **log_kwargs)
    cfg = parse_config(random_config_raw(rng, rows, splits))
    declared = tuple(splits) if cfg.source.splits is not None else tuple(sorted({r.split for r in rows}))
    return Case(seed=seed, rows=tuple(rows), cfg=cfg, declared_splits=declared)


def cases(**log_kwargs: Any) -> st.SearchStrategy[Case]:
    return st.integers(min_value=0, max_value=2**31 - 1).map(lambda seed: random_case(seed, **log_kwargs))
