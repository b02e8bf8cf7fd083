"""The config the tests of semantics/*config*.py start from, and how they change it: `with_` sets (or, with
DELETE, removes) dotted keys of `base()`; `each_error_names_its_key` makes the test that each change of a list
is refused naming its key."""
from __future__ import annotations

import pytest

from event_replay.semantics.config import parse_config
from event_replay.semantics.config_keys import ConfigError

DELETE = object()


def base() -> dict:
    return {
        "source": {"path": "data/log", "format": "parquet"},
        "watermark": {"strategy": "bounded_out_of_orderness", "max_out_of_orderness": "5s", "emit": "periodic",
                      "interval": "200ms"},
        "window": {"type": "tumbling", "size": "10s"},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
        "replay": {"end_of_input": "flush"},
        "output": {"path": "out/x"},
    }


def with_(changes: dict) -> dict:
    """base() with dotted keys set (or removed with DELETE)."""
    raw = base()
    for dotted, value in changes.items():
        parts = dotted.split(".")
        node = raw
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        if value is DELETE:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = value
    return raw


def each_error_names_its_key(bad: list[tuple[dict, str]]):
    """The test that each change of `bad` (changes, the key the error must name) is refused naming its key; a test
    module binds it as its `test_each_error_names_its_key`."""
    @pytest.mark.parametrize("changes,key", bad, ids=[f"{i}-{k}" for i, (_, k) in enumerate(bad)])
    def test(changes, key):
        assert_refused(changes, key)
    return test


def assert_refused(changes: dict, key: str) -> None:
    """The base config with `changes` is refused by a ConfigError naming `key` (and saying why)."""
    with pytest.raises(ConfigError) as exc:
        parse_config(with_(changes))
    assert exc.value.key == key
    assert key in str(exc.value) and exc.value.why
