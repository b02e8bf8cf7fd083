"""Processing-time cases the semantics and engine tests share: a config on the replay clock and the issue's repro
(p0 a row every 250 ms for 5 s, p1 one row at the start, then silent)."""
from __future__ import annotations

import warnings

from event_replay.semantics.config import parse_config
from event_replay.semantics.config_keys import ConfigWarning
from event_replay.semantics.model import LogRow

BASE = 1_700_000_000_000


def cfg_of(window: dict, **replay_keys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        return parse_config({
            "source": {"path": "unused"},
            # What processing time needed before; ignored now (with a warning).
            "watermark": {"strategy": "monotonous", "emit": "per_event"},
            "window": {**window, "time": "processing"}, "aggregations": {"cnt": "count(*)"},
            "replay": {"end_of_input": "hold", **replay_keys}, "output": {"path": "unused"}})


def repro_rows() -> list[LogRow]:
    rows = [LogRow("p0", i, BASE + 250 * i, 0, "k", {"value": 1}) for i in range(20)]
    return rows + [LogRow("p1", 0, BASE, 0, "k", {"value": 1})]
