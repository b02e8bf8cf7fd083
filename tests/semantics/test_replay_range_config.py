"""semantics/replay_range_config.py: the replay range's keys, each refusal naming its key; defaults; instants."""
from __future__ import annotations

from config_cases import DELETE, each_error_names_its_key, with_
from event_replay.semantics.config import parse_config

# (changes to the base config, the key the error must name)
BAD = [
    ({"replay.bogus": 1}, "replay.bogus"),
    ({"replay.start": "not a time"}, "replay.start"),
    ({"replay.end": [2024]}, "replay.end"),
    ({"replay.start": "2024-01-02T00:00:00Z", "replay.end": "2024-01-01T00:00:00Z"}, "replay.end"),
    ({"replay.start": 1000, "replay.end": 1000}, "replay.end"),
    ({"replay.end_of_input": "drain"}, "replay.end_of_input"),
]


test_each_error_names_its_key = each_error_names_its_key(BAD)


def test_defaults():
    cfg = parse_config(with_({"replay": DELETE}))
    assert (cfg.replay.start_ms, cfg.replay.end_ms, cfg.replay.end_of_input) == (None, None, "flush")


def test_instants():
    r = parse_config(with_({"replay.start": "2024-01-01T00:00:00Z", "replay.end": "2024-01-01T00:00:01.5Z"})).replay
    assert (r.start_ms, r.end_ms) == (1_704_067_200_000, 1_704_067_201_500)
    r = parse_config(with_({"replay.start": "2024-01-01T01:00:00+01:00", "replay.end": 1_704_067_200_001})).replay
    assert (r.start_ms, r.end_ms) == (1_704_067_200_000, 1_704_067_200_001)
