"""io/preflight.py: before Spark starts, a local source whose first data file lacks a configured column is refused
naming `source.columns.<role>`; what cannot be read without Spark is left to the read."""
from __future__ import annotations

import pyarrow as pa
import pytest

from event_replay.io.preflight import check_source, source_columns
from event_replay.semantics.config_keys import ConfigError
from source_logs import make_cfg, write_parquet

COLUMNS = ["split", "offset", "arrival_time", "event_time", "key"]


def _parquet(folder, names):
    write_parquet(str(folder), {n: pa.array([1], pa.int64()) for n in names})


def test_the_first_data_file_gives_the_columns(tmp_path):
    _parquet(tmp_path / "src" / "dt=2024-01-01", COLUMNS)
    (tmp_path / "src" / "_SUCCESS").write_text("")
    assert source_columns(make_cfg(tmp_path / "src")) == COLUMNS
    check_source(make_cfg(tmp_path / "src"))


def test_a_missing_column_is_refused_naming_its_role(tmp_path):
    _parquet(tmp_path / "src", [c for c in COLUMNS if c != "event_time"])
    with pytest.raises(ConfigError) as err:
        check_source(make_cfg(tmp_path / "src"))
    assert "source.columns.event_time" in str(err.value)
    check_source(make_cfg(tmp_path / "src", window={"time": "ingestion"}))  # event time not read


def test_a_csv_header(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.csv").write_text("split,offset,arrival_time,ts,key\np,1,1,1,k\n")
    with pytest.raises(ConfigError, match="event_time"):
        check_source(make_cfg(tmp_path / "src", fmt="csv"))
    check_source(make_cfg(tmp_path / "src", fmt="csv", source={"columns": {"event_time": "ts"}}))


def test_unreadable_here_is_left_to_spark(tmp_path):
    assert source_columns(make_cfg(tmp_path / "nothing")) is None
    assert source_columns(make_cfg("s3a://bucket/src")) is None
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.parquet").write_text("not parquet")
    assert source_columns(make_cfg(tmp_path / "bad")) is None
