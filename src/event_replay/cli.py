"""`replay`: run a replay from a job config, or generate a sample log.

    replay run --config FILE [--master URL] [--conf KEY=VALUE ...]
    replay run --config FILE --partition 2024-01-01[THH] [--first] [--end-of-input hold|flush] [--previous P]
    replay run --config FILE --partitions 2024-01-01..2024-12-31 [--first] [...]   (one Spark application)
    replay validate --config FILE | replay why --config FILE
    replay quality --config FILE --out DIR [--run-name ID]   (both, one Spark job, result in DIR/data_quality.json)
    replay tune --config FILE --max-out-of-orderness 1s,5s,30s --idle-timeout none,30s,2m [--allowed-lateness ...]
    replay run --config FILE --partitions 2024-01-01..2024-01-31 --dry-run   (what it would read; nothing written)
    replay verify RUN [--config FILE]   (does the source still hold the input the run's record lists?)
    replay compare --config FILE --live PATH [...]   (the replay against the live job's output: commands/compare.py)
    replay sample --out DIR --rows N --splits K --seed S [...]
    replay config from-flink-sql FILE.sql --source-path P --output-path O   (or from-flink-conf FILE)

Exit codes: 0 ok, 2 bad config or usage (the config is validated before Spark starts), 1 any other failure.

Imports are at the top but for the commands that bring matplotlib, pandas, Great Expectations or sqlglot (why,
tune, compare, validate, quality, config from-flink-sql): those are imported by their command only, to keep them
out of `replay --help`.
"""
from __future__ import annotations

import argparse
import sys
import time
from contextlib import ExitStack
from typing import Sequence

from .commands.compare import add_compare_parser
from .exits import guarded
from .extension import refusal
from .commands.from_flink import add_config_parser
from .from_flink.settings import FlinkSettingsError
from .history.progress import RangeRequest
from .history.state import StateError, require_declared_splits
from .io.fs import is_local
from .io.lock import OutputLocked, output_lock
from .io.preflight import check_source
from .job import partition_plan, run_replay
from .orchestration.cancel import cancellable
from .orchestration.dry_run import main_dry_run
from .orchestration.record import main_verify
from .pipeline import OnePartition, run
from .range_replay import parse_range, run_range
from .samples.log import SampleSpec, write_partitioned_sample, write_sample
from .semantics.config import JobConfig, load_config
from .spark import build_session, driver_memory_note, parse_conf
from .commands.tune import add_tune_parser


def summary_line(summary, seconds: float, memory: str | None = None) -> str:
    return (f"replay: rows read {summary.rows_read}, firings {summary.firings}, late rows {summary.late_rows}, "
            f"quarantined rows {summary.quarantined_rows}, skipped rows {summary.skipped_rows}, "
            f"{seconds:.1f} s{f' ({memory})' if memory else ''} -> {summary.path}")


def cmd_run(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    # Validate before anything starts a JVM: a bad config costs milliseconds, not a Spark start-up.
    checked = _checked_run_config(args)
    if checked is None:
        return 2
    cfg, plan = checked
    if args.dry_run:  # no Spark, nothing written
        first, _, last = (args.partitions or f"{args.partition}..{args.partition}").partition("..")
        return main_dry_run(cfg, first, last, new_history=args.first, previous=args.previous)
    conf = parse_conf(args.conf or [])
    try:
        with ExitStack() as stack:
            if is_local(cfg.output.path):
                # A local output is locked before Spark starts: a concurrent run is refused in milliseconds.
                # (Elsewhere pipeline.run takes it through the Hadoop FileSystem.)
                stack.enter_context(output_lock(cfg.output.path))
            stack.enter_context(cancellable(cfg.output.path))  # SIGTERM: stop, keep what is committed, clean up
            spark = build_session(master=args.master, app_name="event-replay", conf=conf)
            try:
                summary = _replay(spark, cfg, args, plan)
                memory = driver_memory_note(spark)
            finally:
                spark.stop()
    except OutputLocked as exc:
        print(f"replay: refused: {exc}", file=sys.stderr)
        return 1
    if summary is None:
        print(f"replay: {args.partitions}: every partition was already committed", flush=True)
        return 0
    print(summary_line(summary, time.monotonic() - t0, memory), flush=True)
    return 0


def _checked_run_config(args: argparse.Namespace) -> tuple[JobConfig, OnePartition | None] | None:
    """The config `replay run` replays and, with --partition, its plan, every check that needs no Spark done (a
    ConfigError propagates: exit 2); None after printing why the options do not go together."""
    cfg = load_config(args.config)
    partitioned = args.partition or args.partitions
    if args.partition and args.partitions:
        print("replay: --partition and --partitions exclude each other", file=sys.stderr)
        return None
    if not partitioned and (args.first or args.allow_missing or args.dry_run):
        option = "--first" if args.first else ("--allow-missing" if args.allow_missing else "--dry-run")
        print(f"replay: {option} needs --partition or --partitions", file=sys.stderr)
        return None
    if args.end_of_input and not partitioned:
        cfg = cfg.with_end_of_input(args.end_of_input)
    plan = None
    if args.partition:  # a bad id or undeclared splits fail before Spark starts, checked once, by the plan
        plan = partition_plan(cfg, args.partition, first=args.first, end_of_input=args.end_of_input or "hold",
                              previous=args.previous, allow_missing=args.allow_missing)
    elif args.partitions:
        parse_range(args.partitions)
        require_declared_splits(cfg)
    check_source(cfg)  # a role's column missing from a local source: refused before Spark starts
    why = refusal(cfg)  # a session config without the extension's jar
    if why is not None:
        print(f"replay: {why}", file=sys.stderr)
        return None
    return cfg, plan


def _replay(spark, cfg: JobConfig, args: argparse.Namespace, plan: OnePartition | None):
    if args.partitions:
        return _run_range(spark, cfg, args)
    if plan is not None:
        return run(spark, cfg, plan)
    return run_replay(spark, cfg)


def _run_range(spark, cfg: JobConfig, args: argparse.Namespace):
    """The range replay (range_replay.py); its totals as one WriteSummary (None: nothing was left to replay)."""
    lo, hi = parse_range(args.partitions)
    request = RangeRequest(first_id=lo.id, last_id=hi.id, first=args.first, previous=args.previous,
                           end_of_input=args.end_of_input or "hold", allow_missing=args.allow_missing)
    return run_range(spark, cfg, request).totals


def cmd_sample(args: argparse.Namespace) -> int:
    spec = SampleSpec(rows=args.rows, splits=args.splits, seed=args.seed, keys=args.keys, rate=args.rate,
                      start=args.start, files=args.files, format=args.format, epoch_ms=args.epoch_ms,
                      straggler_fraction=args.stragglers, silent_split=not args.no_silent_split)
    t0 = time.monotonic()
    if args.partitioned:
        if spec.format != "parquet":
            raise argparse.ArgumentTypeError("--partitioned writes Parquet only")
        n = write_partitioned_sample(args.out, spec, args.partitioned)
        print(f"sample: {n} rows, {args.splits} splits -> {args.out} (dt= partitions by arrival "
              f"{args.partitioned}, {time.monotonic() - t0:.1f} s)", flush=True)
        return 0
    n = write_sample(args.out, spec)
    print(f"sample: {n} rows, {args.splits} splits -> {args.out} ({time.monotonic() - t0:.1f} s)", flush=True)
    return 0


def add_partition_arguments(parser: argparse.ArgumentParser) -> None:
    """The partition-replay arguments, shared by `replay run` and jobs/replay_job.py (keep them stable:
    the Airflow DAGs pass them, see orchestration/plan.py PartitionRun.job_args)."""
    parser.add_argument("--partition", default=None, metavar="YYYY-MM-DD[THH]",
                        help="replay only this dt= (or dt=/hour=) partition of source.path, continuing from the "
                             "state its predecessor left under <output.path>/_state/")
    parser.add_argument("--partitions", default=None, metavar="FROM..TO",
                        help="replay every partition of FROM..TO (days or hours, inclusive) in order in one Spark "
                             "application, as one --partition run each would: same outputs and state, one commit "
                             "per partition; a rerun after a crash continues after the last one committed")
    parser.add_argument("--first", action="store_true",
                        help="the partition (the range's first) starts a history: no carried state is read")
    parser.add_argument("--end-of-input", choices=("hold", "flush"), default=None,
                        help="hold (default with --partition: the next partition continues) or flush (the last "
                             "partition of a history); without --partition it overrides replay.end_of_input")
    parser.add_argument("--allow-missing", action="store_true",
                        help="a partition with no folder in the source replays as empty (time passes, the state "
                             "carries on) instead of failing; an existing empty folder never fails")
    parser.add_argument("--dry-run", action="store_true",
                        help="list what the run would read (partitions, input files, rows and bytes), what the output "
                             "already has, and an estimated time; nothing is written, no Spark starts")
    parser.add_argument("--previous", default=None, metavar="PARTITION",
                        help="the partition whose state to continue from (default: the latest source partition "
                             "before --partition)")


def cmd_validate(args: argparse.Namespace) -> int:
    from .quality.validation import main_validate  # lazy: Great Expectations (see the module doc)

    return main_validate(args.config)


def cmd_why(args: argparse.Namespace) -> int:
    from .why.report import why_report  # lazy: matplotlib (see the module doc)

    cfg = load_config(args.config)  # refused before Spark starts
    print(f"replay why: {why_report(cfg.output.path, cfg)}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    return main_verify(args.run, args.config)


def cmd_quality(args: argparse.Namespace) -> int:
    from .quality_job import main_quality  # lazy: Great Expectations (see the module doc)

    return main_quality(args.config, args.out, run_name=args.run_name)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="replay", description="Replay event logs with Flink's event-time rules.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a replay job from a YAML config")
    run.add_argument("--config", required=True, help="job config (YAML)")
    run.add_argument("--master", default=None, help="Spark master URL, e.g. local[2] (default: Spark's own)")
    run.add_argument("--conf", action="append", metavar="KEY=VALUE", help="extra Spark conf (repeatable)")
    add_partition_arguments(run)
    run.set_defaults(func=cmd_run)

    check = sub.add_parser("validate", help="run the data-quality suites on a job's outputs (GX checkpoints + "
                                            "Data Docs); exit 1 when an expectation fails")
    check.add_argument("--config", required=True, help="job config (YAML) whose outputs to validate")
    check.set_defaults(func=cmd_validate)

    why = sub.add_parser("why", help="write the why-report (watermark timelines, late rows by cause) of a job's outputs")
    why.add_argument("--config", required=True, help="job config (YAML) whose outputs to explain")
    why.set_defaults(func=cmd_why)

    verify = sub.add_parser("verify", help="check that the source still holds the input a backfill run's record "
                                           "lists (files, sizes, modification times): would a rerun read the same?")
    verify.add_argument("run", help="the run's folder (<output.path>/_airflow/<run_id>/), its run.json, or its run "
                                    "id with --config")
    verify.add_argument("--config", default=None, help="the job config whose output holds the run's folder")
    verify.set_defaults(func=cmd_verify)

    quality = sub.add_parser("quality", help="validate and why in one Spark job (the DAGs' data_quality task): Data "
                                             "Docs, why-report and the outcome (data_quality.json) into one folder; "
                                             "exit 0 once the outcome is written, whatever it says")
    quality.add_argument("--config", required=True, help="job config (YAML) whose outputs to check")
    quality.add_argument("--out", required=True, help="folder for _data_docs/, why_report/ and data_quality.json")
    quality.add_argument("--run-name", default="cli", help="the run named in the Data Docs (the Airflow run id)")
    quality.set_defaults(func=cmd_quality)

    add_tune_parser(sub)
    add_compare_parser(sub)
    add_config_parser(sub)

    sample = sub.add_parser("sample", help="write a sample Parquet log")
    sample.add_argument("--out", required=True, help="output directory (replaced if it exists)")
    sample.add_argument("--rows", type=int, default=100_000)
    sample.add_argument("--splits", type=int, default=4)
    sample.add_argument("--seed", type=int, default=0)
    sample.add_argument("--keys", type=int, default=8, help="distinct keys")
    sample.add_argument("--rate", type=float, default=100.0, help="rows per second of arrival time")
    sample.add_argument("--start", default="2024-01-01T00:00:00Z", help="arrival time of the first row")
    sample.add_argument("--files", type=int, default=4, help="number of files")
    sample.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    sample.add_argument("--epoch-ms", action="store_true", help="time columns as epoch-ms integers")
    sample.add_argument("--stragglers", type=float, default=0.005, help="fraction of very late events")
    sample.add_argument("--no-silent-split", action="store_true", help="no split falls silent")
    sample.add_argument("--partitioned", choices=("day", "hour"), default=None,
                        help="write dt=YYYY-MM-DD (day) or dt=/hour=HH (hour) partitions by arrival time, the "
                             "layout `replay run --partition` reads; e.g. --rows 30000 --rate 0.2 spans ~2 days")
    sample.set_defaults(func=cmd_sample)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return guarded("replay", lambda: args.func(args), (StateError, argparse.ArgumentTypeError, FlinkSettingsError))


if __name__ == "__main__":
    sys.exit(main())
