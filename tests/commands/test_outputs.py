"""The commands on a job's outputs (commands/outputs.py), in process: each is a subcommand of `replay` with its
options, a missing config exits 2 naming the file before anything runs, and `replay verify` of a folder without a
run record exits 2. The suites themselves: tests/quality/; the why-report: tests/why/; the record:
tests/orchestration/test_record.py."""
from __future__ import annotations

import pytest

from event_replay.cli import build_parser, main


def test_the_subcommands_and_their_options():
    parser = build_parser()
    quality = parser.parse_args(["quality", "--config", "c.yaml", "--out", "dq"])
    assert (quality.config, quality.out, quality.run_name) == ("c.yaml", "dq", "cli")
    verify = parser.parse_args(["verify", "runs/r1", "--config", "c.yaml"])
    assert (verify.run, verify.config) == ("runs/r1", "c.yaml")
    for command in ("validate", "why", "quality"):
        with pytest.raises(SystemExit):
            parser.parse_args([command])  # --config is required


@pytest.mark.parametrize("command", [["why"], ["quality", "--out", "dq"]])
def test_a_missing_config_exits_2_naming_it(tmp_path, capsys, command):
    missing = tmp_path / "nope.yaml"
    assert main([*command, "--config", str(missing)]) == 2
    assert "nope.yaml" in capsys.readouterr().err


def test_verify_without_a_record_exits_2(tmp_path, capsys):
    assert main(["verify", str(tmp_path)]) == 2
    assert "no run record" in capsys.readouterr().err
