"""spark-submit entry: the same job as `replay run`, on the session spark-submit provides.

    spark-submit jobs/replay_job.py --config jobs/configs/demo.yaml
    spark-submit jobs/replay_job.py --config FILE --partition 2024-01-01 --end-of-input hold|flush [--first]
                                    [--previous 2023-12-31]

Arguments (stable: the Airflow DAGs pass them through SparkSubmitOperator, see orchestration/plan.py):
    --config FILE         the job config (YAML); validated before the Spark session starts.
    --partition ID        replay only the source partition `dt=YYYY-MM-DD` (ID `YYYY-MM-DD`) or
                          `dt=YYYY-MM-DD/hour=HH` (ID `YYYY-MM-DDTHH`), arrival times [start, end) of that day/hour.
                          Outputs go to `<output.path>/<dataset>/dt=.../`, the carried state to
                          `<output.path>/_state/<ID>/`. Without it, the whole configured range is replayed.
    --first               the partition starts a history (no predecessor state). Otherwise the state of the
                          predecessor (the latest source partition before ID, or --previous) must exist and match
                          the config, else the job fails (exit 2) instead of silently starting over.
    --end-of-input        hold (default with --partition) or flush (the last partition of a history).
    --previous ID         the partition whose state to continue from (default: the latest one before ID).

Exit codes: 0 ok, 2 bad config, arguments or carried state, 1 any other failure.
Runs from a checkout without installing the package (src/ is put on the path), so a cluster only needs
this file, src/ (e.g. via --py-files) and the config.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

_SRC = Path(__file__).resolve().parents[1] / "src"
if _SRC.is_dir() and str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

from event_replay.cli import add_partition_arguments, run_partition, run_replay, summary_line  # noqa: E402
from event_replay.engine.state import Partition, StateError  # noqa: E402
from event_replay.semantics.config import ConfigError, load_config  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="replay_job.py")
    parser.add_argument("--config", required=True)
    add_partition_arguments(parser)
    args = parser.parse_args(argv)
    t0 = time.monotonic()
    try:
        cfg = load_config(args.config)  # before the session: a bad config fails fast
        if args.partition:
            Partition.parse(args.partition)
        elif args.first:
            raise ConfigError("--first", "needs --partition")
    except ConfigError as exc:
        print(f"replay: config error: key '{exc.key}': {exc.why}", file=sys.stderr)
        return 2
    if args.end_of_input and not args.partition:
        cfg = dataclasses.replace(cfg, replay=dataclasses.replace(cfg.replay, end_of_input=args.end_of_input))
    from event_replay.spark import build_session

    spark = build_session(app_name="event-replay")  # master and resources come from spark-submit
    try:
        if args.partition:
            summary = run_partition(spark, cfg, args.partition, first=args.first,
                                    end_of_input=args.end_of_input or "hold", previous=args.previous)
        else:
            summary = run_replay(spark, cfg)
    except ConfigError as exc:
        print(f"replay: config error: key '{exc.key}': {exc.why}", file=sys.stderr)
        return 2
    except StateError as exc:
        print(f"replay: carried state: {exc}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(summary_line(summary, time.monotonic() - t0), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
