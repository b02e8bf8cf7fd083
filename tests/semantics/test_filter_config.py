"""semantics/filter_config.py: the `filter` key, checked before Spark starts; its round trip through to_raw."""
from __future__ import annotations

import pytest

from config_cases import base
from event_replay.semantics.config import parse_config, to_raw
from event_replay.semantics.config_keys import ConfigError
from event_replay.semantics.filter_config import filter_columns


def with_filter(text):
    return {**base(), "filter": text}


def test_absent_filter_is_none_and_not_written_back():
    cfg = parse_config(base())
    assert cfg.filter is None and "filter" not in to_raw(cfg)


def test_filter_is_kept_as_written_and_reads_back_equal():
    cfg = parse_config(with_filter("  status_code = '403' AND bytes > 0 "))
    assert cfg.filter == "status_code = '403' AND bytes > 0"
    assert parse_config(to_raw(cfg)) == cfg
    assert filter_columns(cfg.filter) == ["status_code", "bytes"]
    assert filter_columns("request.path LIKE '/api%' AND `user agent` IS NULL") == ["request", "user agent"]


@pytest.mark.parametrize("text, why", [
    ("", "must be a Spark SQL boolean"),
    (42, "must be a Spark SQL boolean"),
    ("status_code = ", "not a Spark SQL expression"),
    ("(value > 1", "not a Spark SQL expression"),
    ("value > 1; DROP TABLE t", "one expression"),
    ("SELECT 1", "a query or statement"),
    ("value IN (SELECT v FROM t)", "a query or statement"),
    ("count(*) > 1", "an aggregate"),
    ("row_number() OVER (ORDER BY value) = 1", "a window function"),
    ("1 = 1", "reads no column"),
    ("rand() < value", "not the same on every run"),
    ("event_time < current_timestamp()", "not the same on every run"),
])
def test_bad_filters_are_refused_naming_the_key(text, why):
    with pytest.raises(ConfigError) as err:
        parse_config(with_filter(text))
    assert err.value.key == "filter" and why in err.value.why
    assert "\n" not in str(err.value)  # one line
