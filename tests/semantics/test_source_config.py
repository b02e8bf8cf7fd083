"""semantics/source_config.py: the source section's keys, each refusal naming its key; role columns and splits."""
from __future__ import annotations

from config_cases import DELETE, base, each_error_names_its_key, with_
from event_replay.semantics.config import parse_config

# (changes to the base config, the key the error must name)
BAD = [
    ({"source.bogus": 1}, "source.bogus"),
    ({"source.path": DELETE}, "source.path"),
    ({"source.path": ""}, "source.path"),
    ({"source.path": 12}, "source.path"),
    ({"source.format": "json"}, "source.format"),
    ({"source.columns": "split"}, "source.columns"),
    ({"source.columns": {"partition": "p"}}, "source.columns.partition"),
    ({"source.columns": {"key": ""}}, "source.columns.key"),
    ({"source.columns": {"key": 3}}, "source.columns.key"),
    ({"source.columns": {"key": "split"}}, "source.columns"),
    ({"source.splits": "p0"}, "source.splits"),
    ({"source.splits": ["p0", ""]}, "source.splits"),
    ({"source.splits": ["p0", "p0"]}, "source.splits"),
    ({"source.side_inputs": [None]}, "source.side_inputs"),
    ({"source.splits": ["p0", "rules"], "source.side_inputs": ["rules"]}, "source.side_inputs"),
]


test_each_error_names_its_key = each_error_names_its_key(BAD)


def test_defaults():
    cfg = parse_config(base())
    assert dict(cfg.source.columns) == {r: r for r in ("split", "offset", "arrival_time", "event_time", "key")}
    assert cfg.source.splits is None and cfg.source.side_inputs == ()


def test_sources_and_splits():
    cfg = parse_config(with_({"source.format": "csv", "source.columns": {"split": "partition", "key": "user"},
                              "source.splits": ["p1", "p0", 2], "source.side_inputs": ["rules"]}))
    assert cfg.source.columns["split"] == "partition" and cfg.source.columns["offset"] == "offset"
    assert cfg.source.splits == ("p1", "p0", "2") and cfg.source.side_inputs == ("rules",)
