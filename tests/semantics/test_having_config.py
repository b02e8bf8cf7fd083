"""semantics/having_config.py: the `having` key (which firings are written), checked before Spark starts, its round
trip through to_raw, and the reference model's evaluation of it over a firing's columns (row_filter.FiringFilter);
keyless jobs (`source.columns.key: null`) read back too."""
from __future__ import annotations

import pytest

from config_cases import base
from event_replay.semantics.config import parse_config, to_raw
from event_replay.semantics.config_keys import ConfigError
from event_replay.semantics.row_filter import FiringFilter


def test_absent_having_is_none_and_not_written_back():
    cfg = parse_config(base())
    assert cfg.having is None and "having" not in to_raw(cfg)


def test_having_over_key_and_aggregations_reads_back_equal():
    cfg = parse_config({**base(), "having": " cnt > 2 AND (total IS NULL OR key <> 'k0') "})
    assert cfg.having == "cnt > 2 AND (total IS NULL OR key <> 'k0')"
    assert parse_config(to_raw(cfg)) == cfg


@pytest.mark.parametrize("text, why", [
    ("", "must be a Spark SQL boolean"),
    ("value > 1", "not a column of a firing"),
    ("window_start > 0", "not a column of a firing"),
    ("count(*) > 1", "an aggregate"),
    ("cnt > ", "not a Spark SQL expression"),
    ("rand() < cnt", "not the same on every run"),
])
def test_refusals_name_having(text, why):
    with pytest.raises(ConfigError) as e:
        parse_config({**base(), "having": text})
    assert e.value.key == "having" and why in str(e.value)


def test_firing_filter_three_valued():
    f = FiringFilter("cnt > 2 AND total < 100")
    assert f.keeps({"key": "a", "cnt": 3, "total": 5})
    assert not f.keeps({"key": "a", "cnt": 2, "total": 5})
    assert not f.keeps({"key": "a", "cnt": 3, "total": None})  # unknown drops the firing, as HAVING does
    assert FiringFilter("key IS NULL").keeps({"key": None, "cnt": 1, "total": 1})


def test_keyless_source_reads_back():
    raw = base()
    raw["source"]["columns"] = {"key": None}
    cfg = parse_config(raw)
    assert cfg.source.keyless and "key" not in cfg.source.role_columns()
    assert parse_config(to_raw(cfg)) == cfg
    assert not parse_config(base()).source.keyless
