"""`replay tune`: the what-if grid from the command line.

    replay tune --config FILE --max-out-of-orderness 1s,5s,30s --idle-timeout none,30s,2m
                [--allowed-lateness 0,2s] [--partition D | --partitions A..B] [--master URL] [--conf KEY=VALUE ...]
                [--against-live PATH [--live-format F] [--live-columns ...] [--live-late PATH] ...]

`add_tune_parser(subparsers)` adds the subcommand to `replay`'s parser; `main()` is the same command on its own
(`python -m event_replay.tune_job`). With --against-live it is the calibration: the one command for it, also the
backfill DAGs' `calibrate` task (orchestration/calibrate_task.py), which runs it on the run's effective config and
range: it reads the source, never the replay's outputs, so it rebuilds from a run folder without replaying the run.
--partition(s): the variants replay the range of those partitions (as a comparison of them scopes it).
The Spark jobs it ran go to spark_jobs.json next to the grid's result (the run report prints them).
Exit codes as `replay run`: 2 for a bad config, grid or range (checked before Spark starts, the option named),
1 for any other failure.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Sequence

from pyspark.sql import SparkSession

from ..compare.live_spec import CompareInputError
from ..compare.replay_side import Scope
from ..compare.settings_search import scoped_config
from ..exits import command
from ..io.files import input_bytes
from ..extension import refusal
from ..layout import COMPARE_JOBS_FILE
from ..semantics.config import load_config
from ..spark import build_session, parse_conf
from ..spark_jobs import counted
from ..tuning import calibrate  # --against-live: rank the variants by agreement with the live output
from ..tuning.grid import GridError, parse_grid
from ..tuning.table import markdown_table
from .live_options import add_against_live, against_live_spec


def cmd_tune(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    scope = Scope.parse(args.partition, args.partitions)
    cfg = scoped_config(load_config(args.config), scope)
    grid, variants = parse_grid(cfg, args.max_out_of_orderness, args.idle_timeout, args.allowed_lateness)
    why = refusal(cfg)  # a session config without the extension's jar: refused before Spark starts
    if why is not None:
        print(f"replay tune: {why}", file=sys.stderr)
        return 2
    conf = parse_conf(args.conf or [])
    from ..tuning.runner import run_tuning  # lazy: matplotlib and pandas (the plot, the files), not for replay --help

    live = against_live_spec(args)
    if live is not None:
        live.check(cfg)
    print(f"replay tune: {len(variants)} variants of {args.config} -> {grid.name}", flush=True)
    own = SparkSession.getActiveSession() is None  # called in a process that has a session (tests): leave it on
    spark = build_session(master=args.master, app_name="event-replay-tune", conf=conf,
                          input_bytes=input_bytes(cfg.source.path, scope.subpaths))
    step = "calibration" if live is not None else "tuning"
    try:
        with counted(spark, step) as jobs:
            result = run_tuning(spark, cfg, grid, variants, log=lambda m: print(m, flush=True),
                                per_variant=calibrate.per_variant(spark, cfg, live) if live else None)
    finally:
        if own:
            spark.stop()
    (result.folder / COMPARE_JOBS_FILE).write_text(json.dumps({step: jobs.jobs}) + "\n")
    if live is not None:
        calibrate.write_ranking(result.folder, live, result.rows)
    print(markdown_table(result.rows))
    if live is not None:
        print(calibrate.report(result.folder), flush=True)
    print(f"replay tune: {len(result.rows)} variants in {time.monotonic() - t0:.1f} s -> {result.folder} "
          f"(tuning.parquet, tuning.csv, tuning.md, index.html, late_share_vs_lag.png)", flush=True)
    return 0


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--config", required=True, help="job config (YAML): the source and the base settings")
    parser.add_argument("--max-out-of-orderness", default=None, metavar="LIST",
                        help="delays to try, e.g. 1s,5s,30s (default: the config's)")
    parser.add_argument("--idle-timeout", default=None, metavar="LIST",
                        help="idle timeouts to try, 'none' for no idleness, e.g. none,30s,2m (default: the config's)")
    parser.add_argument("--allowed-lateness", default=None, metavar="LIST",
                        help="allowed lateness values to try, e.g. 0,2s (default: the config's)")
    parser.add_argument("--partition", default=None, metavar="YYYY-MM-DD[THH]",
                        help="replay the variants over this partition's range only")
    parser.add_argument("--partitions", default=None, metavar="FROM..TO",
                        help="replay the variants over these partitions' range only (a backfill's; the DAG's "
                             "calibrate task passes its run's)")
    parser.add_argument("--master", default=None, help="Spark master URL, e.g. local[2] (default: Spark's own)")
    parser.add_argument("--conf", action="append", metavar="KEY=VALUE", help="extra Spark conf (repeatable)")
    add_against_live(parser)  # --against-live PATH and how to read it
    parser.set_defaults(func=command("replay tune", cmd_tune, (GridError, CompareInputError)))
    return parser


def add_tune_parser(subparsers) -> argparse.ArgumentParser:
    """`replay tune` on the subparsers of `replay`'s parser (cli.build_parser)."""
    return configure(subparsers.add_parser(
        "tune", help="what-if: replay the same input under a grid of watermark settings and compare late rows, "
                     "watermark lag and firing delay"))


def build_parser() -> argparse.ArgumentParser:
    return configure(argparse.ArgumentParser(prog="python -m event_replay.tune_job", description=__doc__.split("\n")[0]))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
