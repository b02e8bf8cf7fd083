"""`replay compare`: does the replay match what the live job wrote?

    replay compare --config FILE --live PATH [--live-format parquet|csv|json]
                   [--live-columns key=...,window_start=...,window_end=...,<agg>=...,fire_watermark=...]
                   [--live-late PATH] [--live-late-columns split=...,offset=...,key=...,event_time=...]
                   [--live-keeps-updates] [--partition D | --partitions A..B]
                   [--summation-order unknown|known] [--float-tolerance 1e-9] [--min-agreement PCT]
                   [--out DIR] [--no-source] [--search-settings [--calibration DIR]] [--master URL] [--conf K=V ...]

Compares the replay's outputs (under the config's output.path: `replay run` first) with the live output, writes
`<output.path>/compare/` (or --out) and prints one line: windows compared, equal, differing, agreement %, then the
hints, the settings that differ first (with their evidence and confidence); --search-settings confirms them by
replays one setting at a time ("with idle timeout 1.5 s the replay agrees on 100% of windows"). It only compares:
the calibration is `replay tune --against-live` (the DAG's calibrate task) and the data-quality check `replay
quality` (its data_quality task). --calibration DIR names a calibration already made against the same live output
(`<output.path>/_tuning/<grid>/`, what the DAG's calibrate task wrote before this step): the search ranks its
variants with its own and never replays them again.
Exit codes: 0 everything agrees (duplicates in the live output alone do not count as differences), 1 a window or
a late row differs, 2 bad input (a missing column or a type mismatch, named; a bad option or config).
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from pyspark.sql import SparkSession

from ..compare.live_spec import CompareInputError, LiveSpec
from ..compare.summary import comparison_line, differs
from ..compare.replay_side import Scope
from ..compare.rules import DEFAULT_TOLERANCE, SUMMATION_ORDERS
from ..exits import command
from ..io.files import input_bytes
from ..layout import COMPARE_JOBS_FILE
from ..semantics.config import load_config
from ..spark import build_session, parse_conf
from ..spark_jobs import counted
from ..tuning import calibrate
from ..tuning.grid import Grid, Variant
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
                             rank_settings=_rank_settings(spec) if args.search_settings else None,
                             known_settings=calibrated(args.calibration, spec) if args.search_settings else ())
    own = SparkSession.getActiveSession() is None  # called in a process that has a session (tests): leave it on
    spark = build_session(master=args.master, app_name="event-replay-compare", conf=parse_conf(args.conf or []),
                          input_bytes=input_bytes(cfg.source.path, options.scope.subpaths))
    try:
        with counted(spark, "compare") as compare_jobs:
            summary = compare(spark, cfg, spec, options)
        print(comparison_line(summary) + f" ({time.monotonic() - t0:.1f} s)", flush=True)
        for h in summary.get("hints") or []:
            print(f"  - {h['text']}", flush=True)
        _write_jobs(summary, {"compare": compare_jobs.jobs})
    finally:
        if own:
            spark.stop()
    return 1 if differs(summary) and not args.report_only else 0


def _write_jobs(summary: dict, jobs: dict[str, int]) -> None:
    """The comparison's Spark jobs next to its summary.json: the run report prints them."""
    Path(summary["page"]).with_name(COMPARE_JOBS_FILE).write_text(json.dumps(jobs) + "\n")


def calibrated(folder: str | None, spec: LiveSpec) -> tuple[dict, ...]:
    """The variants a calibration against the same live output already replayed and ranked (its calibration.json,
    `replay tune --against-live`), for the settings search to rank and not replay; () without a folder. A folder
    without a calibration, or one against another live output, is refused (exit 2) before Spark starts."""
    if not folder:
        return ()
    path = Path(folder) / calibrate.FILE_JSON
    try:
        doc = json.loads(path.read_text())
        rows, live = doc["ranking"], doc["live"]["path"]
    except (OSError, ValueError, KeyError, TypeError):
        raise CompareInputError("--calibration", f"{folder} holds no calibration ({calibrate.FILE_JSON} of replay "
                                                 "tune --against-live)") from None
    if live != spec.path:
        raise CompareInputError("--calibration", f"{path} ranks against {live}, not against --live {spec.path}")
    return tuple(rows)


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
    parser.add_argument("--calibration", default=None, metavar="DIR",
                        help="with --search-settings: a calibration against the same live output (replay tune "
                             "--against-live's <output.path>/_tuning/<grid>/): its variants are ranked, not "
                             "replayed again")
    parser.add_argument("--master", default=None, help="Spark master URL (default: Spark's own)")
    parser.add_argument("--conf", action="append", metavar="KEY=VALUE", help="extra Spark conf (repeatable)")
    parser.set_defaults(func=command("replay compare", cmd_compare, (CompareInputError,)))
    return parser


def add_compare_parser(subparsers) -> argparse.ArgumentParser:
    """`replay compare` on the subparsers of `replay`'s parser (cli.build_parser)."""
    return configure(subparsers.add_parser(
        "compare", help="compare the replay's outputs with the live job's output: every difference classified and "
                        "explained; exit 0 all agree, 1 differences, 2 bad input"))
