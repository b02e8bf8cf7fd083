"""`replay run`'s options (commands/run.py), in process: options that do not go together and a bad config exit 2
with one line naming them, before a Spark session starts (a session is never built here: build_session raises).
The run itself, end to end through the console script: tests/test_cli.py."""
from __future__ import annotations

import pytest
import yaml

from event_replay.cli import build_parser, main
from event_replay.commands.run import range_request
from event_replay.history.progress import RangeRequest

JOB = {"source": {"path": "nowhere"}, "window": {"type": "tumbling", "size": "2s"},
       "watermark": {"max_out_of_orderness": "1s"}, "aggregations": {"cnt": "count(*)"}, "output": {"path": "out"}}


@pytest.fixture
def config(tmp_path, monkeypatch):
    def no_spark(*_, **__):
        raise AssertionError("a Spark session was started")

    monkeypatch.setattr("event_replay.commands.run.build_session", no_spark)
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({**JOB, "source": {"path": str(tmp_path / "log")},
                                    "output": {"path": str(tmp_path / "out")}}))
    return path


@pytest.mark.parametrize("options, named", [
    (["--partition", "2024-01-01", "--partitions", "2024-01-01..2024-01-02"], "--partition and --partitions"),
    (["--first"], "--first needs --partition"),
    (["--allow-missing"], "--allow-missing needs --partition"),
    (["--dry-run"], "--dry-run needs --partition"),
])
def test_options_that_do_not_go_together_exit_2(config, capsys, options, named):
    assert main(["run", "--config", str(config), *options]) == 2
    assert named in capsys.readouterr().err


def test_a_bad_config_exits_2_naming_the_key(config, capsys):
    raw = yaml.safe_load(config.read_text())
    raw["window"]["size"] = "ten seconds"
    config.write_text(yaml.safe_dump(raw))
    assert main(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "window.size" in err and "ten seconds" in err


def test_a_bad_partition_id_exits_2(config, capsys):
    assert main(["run", "--config", str(config), "--partition", "2024-13-01", "--first"]) == 2
    assert "2024-13-01" in capsys.readouterr().err


@pytest.mark.parametrize("request_", [
    RangeRequest("2024-01-01", "2024-01-03", first=True, previous=None, end_of_input="flush", allow_missing=False),
    RangeRequest("2024-01-01T01", "2024-01-01T02", first=False, previous="2024-01-01T00", end_of_input="hold",
                 allow_missing=True),
    RangeRequest("2024-01-04", "2024-01-04", first=False, previous=None, end_of_input="hold", allow_missing=False),
])
def test_a_range_request_is_what_its_arguments_ask_for(request_):
    """The DAG's jobs pass RangeRequest.args; `replay run` reads the same request back (its progress file's key)."""
    args = build_parser().parse_args(["run", "--config", "c.yaml", *request_.args()])
    assert range_request(args) == request_
