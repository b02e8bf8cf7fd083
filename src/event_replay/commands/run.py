"""`replay run`: a replay from a job config, of the whole source, one partition or a range of partitions.

    replay run --config FILE [--master URL] [--conf KEY=VALUE ...]
    replay run --config FILE --partition 2024-01-01[THH] [--first] [--end-of-input hold|flush] [--previous P]
    replay run --config FILE --partitions 2024-01-01..2024-12-31 [--first] [...]   (one Spark application)
    replay run --config FILE --partitions 2024-01-01..2024-01-31 --dry-run   (what it would read; nothing written)
    replay run --config FILE --plan JSON   (a range's plan as the DAG's planner serialised it: its Spark jobs)

Every check that needs no Spark (the config, the options together, the partition ids, the declared splits, the
source's columns, the extension's jar) runs before a JVM starts: a bad one exits 2 naming it. The options become
one plan of pipeline.py (WholeSource, OnePartition or PartitionSpan), run by one call: a range's (from its options
or from --plan, as the DAG's jobs pass it) by range_replay.run_range, any other by pipeline.run.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import ExitStack

from ..dry_run import main_dry_run
from ..history.state import require_declared_splits
from ..io.files import input_bytes
from ..io.fs import is_local
from ..io.lock import OutputLocked, output_lock
from ..orchestration.cancel import cancellable
from ..pipeline import OnePartition, PartitionSpan, Plan, WholeSource, preflight, run
from ..range_replay import run_range
from ..semantics.config import JobConfig, load_config
from ..semantics.config_keys import ConfigError
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
        return main_dry_run(cfg, as_span(plan))
    conf = parse_conf(args.conf or [])
    try:
        with ExitStack() as stack:
            if is_local(cfg.output.path):
                # A local output is locked before Spark starts: a concurrent run is refused in milliseconds.
                # (Elsewhere pipeline.run takes it through the Hadoop FileSystem.)
                stack.enter_context(output_lock(cfg.output.path))
            stack.enter_context(cancellable(cfg.output.path))  # SIGTERM: stop, keep what is committed, clean up
            spark = build_session(master=args.master, app_name="event-replay", conf=conf,
                                  input_bytes=input_bytes(cfg.source.path, plan.subpaths))
            try:
                summary = _replay(spark, cfg, plan)
                memory = driver_memory_note(spark)
            finally:
                spark.stop()
    except OutputLocked as exc:
        print(f"replay: refused: {exc}", file=sys.stderr)
        return 1
    if summary is None:
        print(f"replay: {plan.to_dict()['partitions']}: every partition was already committed", flush=True)
        return 0
    print(replay_line(summary, time.monotonic() - t0, memory), flush=True)
    return 0


def _checked_run_config(args: argparse.Namespace) -> tuple[JobConfig, Plan] | None:
    """The config `replay run` replays and its plan, every check that needs no Spark done (a ConfigError
    propagates: exit 2); None after printing why the options do not go together."""
    cfg = load_config(args.config)
    history = {"first": args.first, "previous": args.previous, "end_of_input": args.end_of_input or "hold",
               "allow_missing": args.allow_missing}
    if args.plan and (args.partition or args.partitions or args.first or args.previous or args.allow_missing
                      or args.end_of_input):
        print("replay: --plan is the whole request: no other partition option goes with it", file=sys.stderr)
        return None
    partitioned = args.partition or args.partitions or args.plan
    if args.partition and args.partitions:
        print("replay: --partition and --partitions exclude each other", file=sys.stderr)
        return None
    if not partitioned and (args.first or args.allow_missing or args.dry_run):
        option = "--first" if args.first else ("--allow-missing" if args.allow_missing else "--dry-run")
        print(f"replay: {option} needs --partition or --partitions", file=sys.stderr)
        return None
    plan: Plan = WholeSource()
    if args.end_of_input and not partitioned:
        cfg = cfg.with_end_of_input(args.end_of_input)
    # A bad id or undeclared splits fail before Spark starts, checked once, by the plan.
    if args.partition:
        plan = OnePartition.checked(cfg, args.partition, **history)
    elif args.partitions:
        plan = PartitionSpan.checked(cfg, args.partitions, **history)
    elif args.plan:
        try:
            plan = PartitionSpan.from_dict(json.loads(args.plan))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # a ConfigError (a bad id) passes as it is
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError("--plan", f"not a range's plan (pipeline.PartitionSpan.to_dict): {exc!r}") from None
        require_declared_splits(cfg)
    why = preflight(cfg)  # a role's column missing from a local source; session windows without the extension's jar
    if why is not None:
        print(f"replay: {why}", file=sys.stderr)
        return None
    return cfg, plan


def _replay(spark, cfg: JobConfig, plan: Plan):
    """The one call that runs the plan: a range's totals as one WriteSummary (None: nothing was left to replay)."""
    if isinstance(plan, PartitionSpan):
        return run_range(spark, cfg, plan).totals
    return run(spark, cfg, plan)


def as_span(plan: OnePartition | PartitionSpan) -> PartitionSpan:
    """The range a dry run describes: a range's plan, or a partition's as the range of it alone."""
    if isinstance(plan, PartitionSpan):
        return plan
    p = plan.partition.id
    return PartitionSpan.between(p, p, plan.first, plan.previous, plan.end_of_input, plan.allow_missing)


def add_partition_arguments(parser: argparse.ArgumentParser) -> None:
    """The partition-replay arguments of `replay run` (jobs/replay_job.py runs the same; the Airflow DAGs pass
    --plan, as their planner serialised it)."""
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
    parser.add_argument("--plan", default=None, metavar="JSON",
                        help="a range's whole request as the DAG's planner serialised it (pipeline.PartitionSpan."
                             "to_dict: partitions, first, previous, end_of_input, missing)")


def add_run_parser(sub) -> None:
    """`replay run` on the subparsers of `replay`'s parser (cli.build_parser)."""
    run = sub.add_parser("run", help="run a replay job from a YAML config")
    run.add_argument("--config", required=True, help="job config (YAML)")
    run.add_argument("--master", default=None, help="Spark master URL, e.g. local[2] (default: Spark's own)")
    run.add_argument("--conf", action="append", metavar="KEY=VALUE", help="extra Spark conf (repeatable)")
    add_partition_arguments(run)
    run.set_defaults(func=cmd_run)
