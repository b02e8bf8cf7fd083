"""`replay`: the entry point; each subcommand's parser and command is in commands/ (run.py, outputs.py, tune.py,
compare.py, from_flink.py, sample.py), this builds the top parser from them: for a known command only its own
(a run enters no other command's module), for `replay --help` or an unknown command all of them.

    replay run --config FILE [--master URL] [--conf KEY=VALUE ...]
    replay run --config FILE --partition 2024-01-01[THH] [--first] [--end-of-input hold|flush] [--previous P]
    replay run --config FILE --partitions 2024-01-01..2024-12-31 [--first] [...]   (one Spark application)
    replay validate --config FILE | replay why --config FILE
    replay quality --config FILE --out DIR [--run-name ID]   (both, one Spark job, result in DIR/data_quality.json)
    replay tune --config FILE --max-out-of-orderness 1s,5s,30s --idle-timeout none,30s,2m [--allowed-lateness ...]
                [--partitions A..B] [--against-live PATH ...]   (with --against-live: the calibration)
    replay run --config FILE --partitions 2024-01-01..2024-01-31 --dry-run   (what it would read; nothing written)
    replay verify RUN [--config FILE]   (does the source still hold the input the run's record lists?)
    replay compare --config FILE --live PATH [...]   (the replay against the live job's output; only compares)
    replay sample --out DIR --rows N --splits K --seed S [...]
    replay config from-flink-sql FILE.sql --source-path P --output-path O   (or from-flink-conf FILE)

Exit codes: 0 ok, 2 bad config or usage (the config is validated before Spark starts), 1 any other failure.

The commands that bring matplotlib, pandas, Great Expectations or sqlglot (why, tune, compare, validate, quality,
config from-flink-sql) import them when they run, to keep them out of `replay --help`.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .commands.compare import add_compare_parser
from .commands.from_flink import add_config_parser
from .commands.outputs import add_output_parsers
from .commands.run import add_run_parser
from .commands.sample import add_sample_parser
from .commands.tune import add_tune_parser
from .console import quiet_stderr
from .exits import guarded
from .from_flink.settings import FlinkSettingsError
from .history.state import StateError


# Each command's parser, by the command's name: a run builds only its own (the others' modules are not entered).
_PARSERS = {"run": add_run_parser, "validate": add_output_parsers, "why": add_output_parsers,
            "verify": add_output_parsers, "quality": add_output_parsers, "tune": add_tune_parser,
            "compare": add_compare_parser, "config": add_config_parser, "sample": add_sample_parser}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """`replay`'s parser; with a known `command`, only that command's subparser (`replay --help` and an unknown
    command get them all)."""
    parser = argparse.ArgumentParser(prog="replay", description="Replay event logs with Flink's event-time rules.")
    sub = parser.add_subparsers(dest="command", required=True)
    adders = [_PARSERS[command]] if command in _PARSERS else list(dict.fromkeys(_PARSERS.values()))
    for add in adders:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command; run as the program (no `argv`), its stderr shows its own lines, Spark's go to a file
    (console.py)."""
    program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    refusals = (StateError, argparse.ArgumentTypeError, FlinkSettingsError)
    if not program:
        return guarded("replay", lambda: args.func(args), refusals)
    with quiet_stderr("replay"):
        return guarded("replay", lambda: args.func(args), refusals)


if __name__ == "__main__":
    sys.exit(main())
