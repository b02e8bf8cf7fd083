"""The `replay` section of a job config: the arrival-time range [start, end) replayed, and what the end of the
input does to the windows still open (flush: fire them; hold: keep them for the next partition).

`parse_replay_range` refuses a bad key, or an end not after the start, with a ConfigError naming it;
`replay_range_raw` writes the section back in the shape `parse_replay_range` reads.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping, get_args

from .config_keys import ConfigError, read_choice, read_instant, refuse_unknown

EndOfInput = Literal["flush", "hold"]
END_OF_INPUT: tuple[str, ...] = get_args(EndOfInput)  # in the order error messages list them


@dataclass(frozen=True)
class ReplayRangeConfig:
    start_ms: int | None = None
    end_ms: int | None = None
    end_of_input: EndOfInput = "flush"


def parse_replay_range(raw: Mapping[str, Any]) -> ReplayRangeConfig:
    p = "replay"
    refuse_unknown(raw, {"start", "end", "end_of_input"}, p)
    start = read_instant(raw, "start", p)
    end = read_instant(raw, "end", p)
    if start is not None and end is not None and end <= start:
        raise ConfigError(f"{p}.end", "must be after replay.start (the range is [start, end))")
    eoi = read_choice(raw, "end_of_input", END_OF_INPUT, "flush", p)
    return ReplayRangeConfig(start_ms=start, end_ms=end, end_of_input=eoi)


def replay_range_raw(r: ReplayRangeConfig) -> dict[str, Any]:
    raw: dict[str, Any] = {"end_of_input": r.end_of_input}
    if r.start_ms is not None:
        raw["start"] = r.start_ms
    if r.end_ms is not None:
        raw["end"] = r.end_ms
    return raw
