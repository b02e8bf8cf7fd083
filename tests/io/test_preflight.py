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


def test_a_missing_source_or_a_file_as_output_is_refused(tmp_path):
    from event_replay.io.preflight import check_paths

    with pytest.raises(ConfigError, match="source.path") as err:
        check_paths(make_cfg(tmp_path / "no-such-log"))
    assert str(tmp_path / "no-such-log") in str(err.value)
    _parquet(tmp_path / "log" / "dt=2024-01-01", COLUMNS)
    check_paths(make_cfg(tmp_path / "log"))
    check_paths(make_cfg(str(tmp_path / "log" / "dt=*")))  # a glob that matches
    check_paths(make_cfg("s3a://bucket/log"))  # not looked at here
    (tmp_path / "out.txt").write_text("")
    with pytest.raises(ConfigError, match="output.path"):
        check_paths(make_cfg(tmp_path / "log", out=tmp_path / "out.txt"))


def test_replay_run_with_a_missing_source_starts_no_jvm(tmp_path, monkeypatch, capsys):
    """`replay run` refuses a missing source.path (exit 2, naming the key) before any Spark session or JVM: the
    session builder and the JVM launcher fail this test if called. It used to start Spark and refuse after 16.7 s."""
    import time

    import pyspark.java_gateway
    import yaml

    from event_replay import cli
    from event_replay.commands import run as run_command

    def no_spark(*args, **kwargs):
        raise AssertionError("a Spark session was started")

    monkeypatch.setattr(run_command, "build_session", no_spark)
    monkeypatch.setattr(pyspark.java_gateway, "launch_gateway", no_spark)
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump({"source": {"path": str(tmp_path / "no-such-log"), "splits": ["p0", "p1"]},
                                      "window": {"type": "tumbling", "size": "10s"},
                                      "watermark": {"max_out_of_orderness": "1s"},
                                      "aggregations": {"cnt": "count(*)"}, "output": {"path": str(tmp_path / "out")}}))
    for extra in ([], ["--partitions", "2024-01-01..2024-01-03", "--first"]):
        t0 = time.monotonic()
        assert cli.main(["run", "--config", str(config), *extra]) == 2
        seconds = time.monotonic() - t0
        err = capsys.readouterr().err
        assert "source.path" in err and "no-such-log" in err, err
        print(f"refused in {seconds:.3f} s {extra}")
    assert not (tmp_path / "out").exists()
