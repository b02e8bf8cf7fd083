"""Flink differential cases of issue 50's window shapes: cumulate windows (Flink's table-runtime
CumulativeWindowAssigner in the window operator, harness/CumulativeWindows.java) through the generated matrix of
watermark strategies, idleness, lateness, side inputs and ends of input; keyless windows (every key null: one group
per window, Flink's keyBy on a constant); both with HAVING (a filter after the window operator, applied to Flink's
firings as the job's downstream filter would be)."""
from __future__ import annotations

import dataclasses
import random
from typing import Any

from event_replay.semantics.config import JobConfig, parse_config, to_raw
from event_replay.semantics.model import ReplayResult
from event_replay.semantics.row_filter import FiringFilter
from flink_cases import LATENESS, generated_config
from strategies import random_log

CUMULATE = [
    {"type": "cumulate", "size": 4000, "step": 1000},
    {"type": "cumulate", "size": 3000, "step": 500, "offset": 250},
    {"type": "cumulate", "size": 2000, "step": 2000},  # step == size: tumbling windows through the cumulate path
    {"type": "cumulate", "size": 10000, "step": 1000, "offset": 2500},
    {"type": "cumulate", "size": 6000, "step": 2000, "offset": 100},
]
HAVING = ["cnt % 2 = 0", "total > 20 OR cnt = 1"]


def _reshaped(cfg: JobConfig, window: dict[str, Any] | None, keyless: bool, having: str | None) -> JobConfig:
    raw = to_raw(cfg)
    if window is not None:
        raw["window"] = {**window, "allowed_lateness": cfg.window.allowed_lateness_ms}
    if keyless:
        raw["source"]["columns"]["key"] = None
    if having is not None:
        raw["having"] = having
    return parse_config(raw)


def shape_cases(count: int = 30, seed: int = 50_000) -> list[tuple[str, list, JobConfig, Any]]:
    """Case n: cumulate windows (cycling through CUMULATE) for n % 3 != 2, else the matrix's own window type;
    keyless for n % 3 == 1 and n % 3 == 2; a HAVING for n % 4 == 3."""
    cases = []
    for n in range(count):
        rng = random.Random(seed + n)
        while True:
            rows, splits = random_log(rng, max_rows=rng.choice([60, 200, 500]), max_splits=rng.choice([2, 5, 8]),
                                      max_keys=4, base=rng.randint(0, 10**6))
            if len(rows) >= 5:
                break
        cfg, declared = generated_config(rng, n * 11 + 3, rows, splits)  # * 11 + 3: every residue of the matrix
        cfg = dataclasses.replace(cfg, window=dataclasses.replace(
            cfg.window, allowed_lateness_ms=LATENESS[n % len(LATENESS)]))
        keyless = n % 3 != 0
        window = CUMULATE[n % len(CUMULATE)] if n % 3 != 2 else None
        cfg = _reshaped(cfg, window, keyless, HAVING[n % 2] if n % 4 == 3 else None)
        if keyless:
            rows = [dataclasses.replace(r, key=None) for r in rows]
        cases.append((f"shape{n:03d}", rows, cfg, declared))
    return cases


def with_having(result: ReplayResult, cfg: JobConfig) -> ReplayResult:
    """Flink's firings as the job's filter after the window function passes them (the harness's job has none)."""
    if cfg.having is None:
        return result
    keep = FiringFilter(cfg.having)
    firings = [f for f in result.firings if keep.keeps({"key": f.key, **f.aggregates})]
    return dataclasses.replace(result, firings=firings)


SHAPES = shape_cases()
