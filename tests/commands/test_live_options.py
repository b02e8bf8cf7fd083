"""The `--live-*` options (commands/live_options.py): `replay tune --against-live` and `replay compare --live` read
the same options into the same LiveSpec."""
from __future__ import annotations

import argparse

from event_replay.commands.compare import configure as configure_compare
from event_replay.commands.live_options import add_against_live, against_live_spec
from event_replay.compare.live_spec import LiveSpec

HOW = ["--live-format", "csv", "--live-columns", "key=user,window_end=we", "--live-late", "/late",
       "--live-keeps-updates", "--live-option", "header=true"]


def test_the_live_spec_from_the_command_line():
    parser = argparse.ArgumentParser()
    add_against_live(parser)
    assert against_live_spec(parser.parse_args([])) is None
    spec = against_live_spec(parser.parse_args(["--against-live", "/live", *HOW]))
    assert (spec.path, spec.format, spec.late_path, spec.keeps_updates) == ("/live", "csv", "/late", True)
    assert spec.columns == {"key": "user", "window_end": "we"} and spec.options == {"header": "true"}


def test_compare_and_tune_read_the_same_options_alike():
    compare = configure_compare(argparse.ArgumentParser()).parse_args(["--config", "c.yaml", "--live", "/live", *HOW])
    tune = argparse.ArgumentParser()
    add_against_live(tune)
    assert LiveSpec.from_args(compare, compare.live) == against_live_spec(tune.parse_args(["--against-live", "/live",
                                                                                          *HOW]))
