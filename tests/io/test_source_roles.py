"""io/source_roles.py: the role columns checked (a missing or reserved column names its key), each role converted,
and each row's first quarantine reason in the documented order."""
from __future__ import annotations

import pytest

from event_replay.io.quarantine import REASON_COLUMN
from event_replay.io.source_roles import parsed_roles, quarantine_reason, source_roles
from event_replay.semantics.config_keys import ConfigError
from source_logs import BASE, make_cfg

pytestmark = pytest.mark.spark

SCHEMA = "split string, offset long, arrival_time long, event_time long, key string, value long"


def test_the_roles_payload_and_refusals(spark):
    raw = spark.createDataFrame([], SCHEMA)
    roles = source_roles(raw, make_cfg("x"))
    assert roles.payload == ["value"] and roles.timestamp_roles() == set() and roles.event_time_from_source
    with pytest.raises(ConfigError) as e:
        source_roles(raw, make_cfg("x", source={"columns": {"key": "user"}}))
    assert e.value.key == "source.columns.key"
    with pytest.raises(ConfigError) as e:
        source_roles(spark.createDataFrame([], SCHEMA + f", {REASON_COLUMN} string"), make_cfg("x"))
    assert e.value.key == "source.path"
    ingestion = source_roles(raw, make_cfg("x", window={"time": "ingestion"}))
    assert ingestion.payload == ["value"] and not ingestion.event_time_from_source  # the source's event time is not payload


def test_each_rows_first_reason(spark):
    rows = [("a", 0, BASE, BASE, "k", 1), ("a", 1, None, BASE, "k", 1), ("a", 2, -5, None, "k", 1),
            ("", 3, BASE, BASE, "k", 1), ("a", None, BASE, None, "k", 1), ("a", 5, BASE, BASE, None, 1),
            ("z", 6, BASE, BASE, "k", 1)]
    raw = spark.createDataFrame(rows, SCHEMA)
    cfg = make_cfg("x", source={"splits": ["a"]})
    roles = source_roles(raw, cfg)
    got = parsed_roles(raw, roles).select(quarantine_reason(roles, cfg).alias("r")).collect()
    assert [r["r"] for r in got] == [None, "missing_arrival_time", "arrival_time_before_1970", "missing_split",
                                     "missing_event_time", "missing_key", "undeclared_split"]
