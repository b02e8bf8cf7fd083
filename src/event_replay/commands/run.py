"""`replay run`: a replay from a job config, of the whole source, one partition or a range of partitions.

    replay run --config FILE [--master URL] [--conf KEY=VALUE ...]
    replay run --config FILE --partition 2024-01-01[THH] [--first] [--end-of-input hold|flush] [--previous P]
    replay run --config FILE --partitions 2024-01-01..2024-12-31 [--first] [...]   (one Spark application)
    replay run --config FILE --partitions 2024-01-01..2024-01-31 --dry-run   (what it would read; nothing written)

Every check that needs no Spark (the config, the options together, the partition ids, the declared splits, the
source's columns, the extension's jar) runs before a JVM starts: a bad one exits 2 naming it.
"""
from __future__ import annotations

import argparse
import sys
import time
from contextlib import ExitStack

from ..extension import refusal
from ..dry_run import main_dry_run
from ..history.partitions import parse_range
from ..history.progress import RangeRequest
from ..history.state import require_declared_splits
from ..io.fs import is_local
from ..io.lock import OutputLocked, output_lock
from ..io.preflight import check_source
from ..job import run_replay
from ..orchestration.cancel import cancellable
from ..pipeline import OnePartition, run
from ..range_replay import run_range
from ..semantics.config import JobConfig, load_config
from ..spark import build_session, driver_memory_note, parse_conf


def replay_line(summary, seconds: float, memory: str | None = None) -> str:
    """The line `replay run` prints when it is done: the rows read and what became of them (the rows the job's
    filter dropped when it dropped any), the time, the output."""
    filtered = f"filtered rows {summary.filtered_rows}, " if summary.filtered_rows else ""
    return (f"replay: rows read {summary.rows_read}, firings {summary.firings}, late rows {summary.late_rows}, "
            f"quarantined rows {summary.quarantined_rows}, skipped rows {summary.skipped_rows}, {filtered}"
            f"{seconds:.1f} s{f' ({memory})' if memory else ''} -> {summary.path}")


def cmd_run(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    # Validate before anything starts a JVM: a bad config costs milliseconds, not a Spark start-up.
    checked = _checked_run_config(args)
    if checked is None:
        return 2
    cfg, plan = checked
    if args.dry_run:  # no Spark, nothing written
        return main_dry_run(cfg, range_request(args))
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
    print(replay_line(summary, time.monotonic() - t0, memory), flush=True)
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
        plan = OnePartition.checked(cfg, args.partition, first=args.first, end_of_input=args.end_of_input or "hold",
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
    return run_range(spark, cfg, range_request(args)).totals


def range_request(args: argparse.Namespace) -> RangeRequest:
    """What `--partitions FROM..TO` (or, for a dry run, `--partition ID`) asks for (RangeRequest.args: back)."""
    lo, hi = parse_range(args.partitions or f"{args.partition}..{args.partition}")
    return RangeRequest(first_id=lo.id, last_id=hi.id, first=args.first, previous=args.previous,
                        end_of_input=args.end_of_input or "hold", allow_missing=args.allow_missing)


def add_partition_arguments(parser: argparse.ArgumentParser) -> None:
    """The partition-replay arguments, shared by `replay run` and jobs/replay_job.py (keep them stable:
    the Airflow DAGs pass them: history/progress.py RangeRequest.args)."""
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
                        help="the partition whose state to continue from (default: the latest partition before "
                             "--partition with a source folder or a state)")



def add_run_parser(sub) -> None:
    """`replay run` on the subparsers of `replay`'s parser (cli.build_parser)."""
    run = sub.add_parser("run", help="run a replay job from a YAML config")
    run.add_argument("--config", required=True, help="job config (YAML)")
    run.add_argument("--master", default=None, help="Spark master URL, e.g. local[2] (default: Spark's own)")
    run.add_argument("--conf", action="append", metavar="KEY=VALUE", help="extra Spark conf (repeatable)")
    add_partition_arguments(run)
    run.set_defaults(func=cmd_run)
