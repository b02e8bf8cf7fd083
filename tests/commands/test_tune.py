"""`replay tune` (commands/tune.py): the subcommand on `replay`'s parser, and `main` refusing what it cannot run with
exit code 2 and a line naming the option or key, before a Spark session starts (the run itself: test_runner.py;
the module as a process: tests/test_tune_job.py)."""
from __future__ import annotations

import argparse

import pytest

from event_replay.commands.tune import add_tune_parser, main

JOB = ("source: {{path: {src}}}\nwindow: {{type: tumbling, size: 2s}}\nwatermark: {{max_out_of_orderness: 1s}}\n"
       "aggregations: {{cnt: count(*)}}\noutput: {{path: {out}}}\n")


@pytest.fixture
def job(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(JOB.format(src=tmp_path / "nowhere", out=tmp_path / "out"))
    return path


def test_tune_is_a_subcommand_of_replay():
    parser = argparse.ArgumentParser(prog="replay")
    add_tune_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["tune", "--config", "c.yaml", "--max-out-of-orderness", "1s,5s", "--idle-timeout",
                              "none,30s", "--master", "local[1]", "--conf", "a=b", "--against-live", "live/"])
    assert (args.command, args.max_out_of_orderness, args.idle_timeout, args.allowed_lateness, args.conf) == \
        ("tune", "1s,5s", "none,30s", None, ["a=b"]) and callable(args.func)
    assert (args.against_live, args.live_format, args.live_keeps_updates) == ("live/", "parquet", False)


@pytest.mark.parametrize("option, value", [("--idle-timeout", "none,1 fortnight"),
                                           ("--max-out-of-orderness", "1s,,5s"),
                                           ("--allowed-lateness", "soon")])
def test_a_bad_grid_exits_2_naming_the_option(job, capsys, option, value):
    assert main(["--config", str(job), option, value]) == 2
    err = capsys.readouterr().err
    assert err.startswith("replay tune: ") and option in err, err


def test_a_bad_config_exits_2_naming_the_key(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(JOB.format(src=tmp_path, out=tmp_path / "out").replace("size: 2s", "size: -2s"))
    assert main(["--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "config error: key 'window.size'" in err, err


def test_bad_live_columns_exit_2_before_spark(job, capsys):
    assert main(["--config", str(job), "--against-live", str(job.parent / "live"), "--live-columns", "nokey"]) == 2
    err = capsys.readouterr().err
    assert "--live-columns" in err and "Traceback" not in err, err
