"""`replay compare`: does the replay match what the live job wrote?

    replay compare --config FILE --live PATH [--live-format parquet|csv|json]
                   [--live-columns key=...,window_start=...,window_end=...,<agg>=...,fire_watermark=...]
                   [--live-late PATH] [--live-late-columns split=...,offset=...,key=...,event_time=...]
                   [--live-keeps-updates] [--partition D | --partitions A..B]
                   [--summation-order unknown|known] [--float-tolerance 1e-9] [--min-agreement PCT]
                   [--out DIR] [--no-source] [--search-settings] [--master URL] [--conf K=V ...]
                   [--calibrate-max-out-of-orderness LIST] [--calibrate-idle-timeout LIST] [...]

Compares the replay's outputs (under the config's output.path: `replay run` first) with the live output, writes
`<output.path>/compare/` (or --out) and prints one line: windows compared, equal, differing, agreement %, then the
hints, the settings that differ first (with their evidence and confidence); --search-settings confirms them by
replays one setting at a time ("with idle timeout 1.5 s the replay agrees on 100% of windows"); with a grid
(--calibrate-*) too, the grid is ranked first and the search reuses its replays (the DAG's compare task).
With --calibrate-*, a what-if grid is then ranked by agreement with the same live output in the same Spark
application (what `replay tune --against-live` does; results under <output.path>/_tuning/<grid>/). The data-quality
check is a command (`replay quality`) and a DAG task of its own.
Exit codes: 0 everything agrees (duplicates in the live output alone do not count as differences), 1 a window or
a late row differs, 2 bad input (a missing column or a type mismatch, named; a bad option or config).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from pathlib import Path

from pyspark.sql import SparkSession

from ..compare.live_spec import CompareInputError, LiveSpec
from ..compare.summary import comparison_line, differs
from ..compare.replay_side import Scope
from ..compare.rules import DEFAULT_TOLERANCE, SUMMATION_ORDERS
from ..compare.settings_search import scoped_config
from ..exits import command
from ..layout import COMPARE_JOBS_FILE
from ..semantics.config import load_config
from ..spark import build_session, parse_conf
from ..spark_jobs import counted
from ..tuning import calibrate
from ..tuning.grid import Grid, GridError, Variant, parse_grid
from .live_options import add_live_options


def cmd_compare(args: argparse.Namespace) -> int:
    from ..compare.run import CompareOptions, compare  # lazy: pandas, not for --help

    t0 = time.monotonic()
    cfg = load_config(args.config)  # refused before Spark starts (exit 2)
    spec = LiveSpec.from_args(args, args.live)
    spec.check(cfg)
    spec.check_paths()  # a missing local path is refused before Spark starts
    if not 0 <= args.min_agreement <= 100:
        raise CompareInputError("--min-agreement", f"a percentage in [0, 100], got {args.min_agreement}")
    options = CompareOptions(scope=Scope.parse(args.partition, args.partitions),
                             summation_order=args.summation_order, float_tolerance=args.float_tolerance,
                             min_agreement_pct=args.min_agreement, out_dir=args.out, use_source=not args.no_source,
                             rank_settings=_rank_settings(spec) if args.search_settings else None)
    grid = _calibration_grid(cfg, args)  # checked before Spark starts, like `replay tune`'s
    own = SparkSession.getActiveSession() is None  # called in a process that has a session (tests): leave it on
    spark = build_session(master=args.master, app_name="event-replay-compare", conf=parse_conf(args.conf or []))
    try:
        scoped = scoped_config(cfg, options.scope)
        known: list[dict] = []
        with counted(spark, "calibration") as calibration_jobs:
            if grid is not None and args.search_settings:  # first: the search ranks the grid's replays, not again
                known = _calibrate(spark, scoped, spec, _calibration_grid(scoped, args))
                options = dataclasses.replace(options, known_settings=tuple(known))
        with counted(spark, "compare") as compare_jobs:
            summary = compare(spark, cfg, spec, options)
        print(comparison_line(summary) + f" ({time.monotonic() - t0:.1f} s)", flush=True)
        for h in summary.get("hints") or []:
            print(f"  - {h['text']}", flush=True)
        if grid is not None and not args.search_settings:
            with counted(spark, "calibration") as later:
                _calibrate(spark, scoped, spec, _calibration_grid(scoped, args))
            calibration_jobs.jobs += later.jobs
        _write_jobs(summary, {"compare": compare_jobs.jobs,
                              **({"calibration": calibration_jobs.jobs} if grid is not None else {})})
    finally:
        if own:
            spark.stop()
    return 1 if differs(summary) and not args.report_only else 0


def _write_jobs(summary: dict, jobs: dict[str, int]) -> None:
    """The comparison's Spark jobs (and its calibration's) next to its summary.json: the run report prints them."""
    Path(summary["page"]).with_name(COMPARE_JOBS_FILE).write_text(json.dumps(jobs) + "\n")


def _calibration_grid(cfg, args: argparse.Namespace):
    """--calibrate-*: the what-if grid to rank against the live output after the comparison (None: none)."""
    lists = (args.calibrate_max_out_of_orderness, args.calibrate_idle_timeout, args.calibrate_allowed_lateness)
    if not any(lists):
        return None
    return parse_grid(cfg, *lists, options={"max_out_of_orderness": "--calibrate-max-out-of-orderness",
                                            "idle_timeout": "--calibrate-idle-timeout",
                                            "allowed_lateness": "--calibrate-allowed-lateness"})


def _calibrate(spark, cfg, spec: LiveSpec, grid) -> list[dict]:
    """`replay tune --against-live` in this Spark application: the grid's result under <output.path>/_tuning/;
    its rows (each variant ranked against the live output)."""
    from ..tuning.runner import run_tuning  # lazy: matplotlib and pandas, not for replay --help

    g, variants = grid
    result = run_tuning(spark, cfg, g, variants, log=lambda m: print(m, flush=True),
                        per_variant=calibrate.per_variant(spark, cfg, spec))
    calibrate.write_ranking(result.folder, spec, result.rows)
    print(calibrate.report(result.folder), flush=True)
    return result.rows


def _rank_settings(spec: LiveSpec):
    """compare.settings_search's Ranker: the variants replayed over the source read once and ranked against the
    live output by the calibration (tuning/), their files in a temporary folder."""
    from ..tuning.runner import run_tuning  # lazy: matplotlib and pandas, not for replay --help

    def rank(cfg, settings):
        with tempfile.TemporaryDirectory(prefix="settings-search-") as tmp:
            base = cfg.with_overrides(output={"path": tmp})
            variants = [Variant.of(*s) for s in settings]
            grid = Grid(*(tuple(sorted({s[i] for s in settings}, key=lambda v: (v is not None, v or 0)))
                          for i in range(3)))
            spark = SparkSession.getActiveSession()
            result = run_tuning(spark, base, grid, [(v, v.config(base)) for v in variants],
                                log=lambda m: print(f"settings search: {m}", flush=True),
                                per_variant=calibrate.per_variant(spark, base, spec))
        return result.rows  # in the variants' order, ranked (live_rank) when the grid's result was written

    return rank


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--config", required=True, help="the job config whose outputs to compare (replay run first)")
    parser.add_argument("--live", required=True, metavar="PATH", help="the live job's output (its sink): a file or "
                                                                       "folder")
    add_live_options(parser)
    parser.add_argument("--partition", default=None, metavar="YYYY-MM-DD[THH]", help="compare one partition")
    parser.add_argument("--partitions", default=None, metavar="FROM..TO", help="compare a range of partitions")
    parser.add_argument("--summation-order", choices=SUMMATION_ORDERS, default="unknown",
                        help="unknown (default): floating-point sums and averages compare within --float-tolerance; "
                             "known: exactly")
    parser.add_argument("--float-tolerance", type=float, default=DEFAULT_TOLERANCE,
                        help=f"relative tolerance of floating-point sums/averages (default {DEFAULT_TOLERANCE:g})")
    parser.add_argument("--min-agreement", type=float, default=100.0, metavar="PCT",
                        help="the agreement per partition the live parity suite expects (default 100)")
    parser.add_argument("--out", default=None, help="where to write compare/ (default <output.path>/compare)")
    parser.add_argument("--report-only", action="store_true",
                        help="exit 0 once the comparison is written, whatever it found (the DAG's compare task: "
                             "the live parity suite is the gate)")
    parser.add_argument("--search-settings", action="store_true",
                        help="confirm the diagnosis: replay the suspect settings one at a time (at most 6 replays of "
                             "the compared range, the source read once) and lead with the one that agrees fully")
    parser.add_argument("--no-source", action="store_true",
                        help="do not read the source for per-split rows of the windows the live output lacks")
    for name, what in (("max-out-of-orderness", "delays"), ("idle-timeout", "idle timeouts ('none': no idleness)"),
                       ("allowed-lateness", "allowed lateness values")):
        parser.add_argument(f"--calibrate-{name}", default=None, metavar="LIST",
                            help=f"after the comparison, rank a what-if grid of {what} by agreement with the live "
                                 "output in the same Spark application (as replay tune --against-live)")
    parser.add_argument("--master", default=None, help="Spark master URL (default: Spark's own)")
    parser.add_argument("--conf", action="append", metavar="KEY=VALUE", help="extra Spark conf (repeatable)")
    parser.set_defaults(func=command("replay compare", cmd_compare, (CompareInputError, GridError)))
    return parser


def add_compare_parser(subparsers) -> argparse.ArgumentParser:
    """`replay compare` on the subparsers of `replay`'s parser (cli.build_parser)."""
    return configure(subparsers.add_parser(
        "compare", help="compare the replay's outputs with the live job's output: every difference classified and "
                        "explained; exit 0 all agree, 1 differences, 2 bad input"))
