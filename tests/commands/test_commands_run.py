"""`replay run`'s options (commands/run.py), in process: options that do not go together and a bad config exit 2
with one line naming them, before a Spark session starts (a session is never built here: build_session raises).
The run itself, end to end through the console script: tests/test_cli.py."""
from __future__ import annotations

import pytest
import yaml

from event_replay.cli import build_parser, main
import json

from event_replay.commands.run import _checked_run_config
from event_replay.pipeline import PartitionSpan

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


@pytest.mark.parametrize("plan, options", [
    (PartitionSpan.between("2024-01-01", "2024-01-03", first=True, end_of_input="flush"),
     ["--partitions", "2024-01-01..2024-01-03", "--first", "--end-of-input", "flush"]),
    (PartitionSpan.between("2024-01-01T01", "2024-01-01T02", previous="2024-01-01T00", allow_missing=True),
     ["--partitions", "2024-01-01T01..2024-01-01T02", "--previous", "2024-01-01T00", "--allow-missing"]),
    (PartitionSpan.between("2024-01-04", "2024-01-04"), ["--partitions", "2024-01-04..2024-01-04"]),
])
def test_a_range_plan_is_what_its_options_or_its_serialised_form_ask_for(config, plan, options):
    """The DAG's jobs pass the plan serialised (--plan); a user types the options: one plan either way."""
    raw = yaml.safe_load(config.read_text())
    raw["source"]["splits"] = ["p0"]
    config.write_text(yaml.safe_dump(raw))
    (config.parent / "log").mkdir()  # an empty source: nothing to check its columns against
    for given in (options, ["--plan", json.dumps(plan.to_dict())]):
        args = build_parser().parse_args(["run", "--config", str(config), *given])
        assert _checked_run_config(args)[1] == plan


def test_a_serialised_plan_goes_with_no_other_partition_option(config, capsys):
    plan = json.dumps(PartitionSpan.between("2024-01-01", "2024-01-02").to_dict())
    assert main(["run", "--config", str(config), "--plan", plan, "--first"]) == 2
    assert "--plan is the whole request" in capsys.readouterr().err


def test_a_plan_that_is_not_one_exits_2_naming_it(config, capsys):
    assert main(["run", "--config", str(config), "--plan", '{"partitions": "2024-01-01..2024-01-02"}']) == 2
    assert "--plan" in capsys.readouterr().err
