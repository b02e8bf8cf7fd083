"""spark-submit entry: the same job as `replay run` (or `replay quality`), on the session spark-submit provides.

    spark-submit jobs/replay_job.py --config jobs/configs/demo.yaml
    spark-submit jobs/replay_job.py --config FILE --partition 2024-01-01 --end-of-input hold|flush [--first]
                                    [--previous 2023-12-31]
    spark-submit jobs/replay_job.py --config FILE --partitions 2024-01-01..2024-01-31 --end-of-input hold|flush
                                    [--first | --previous 2023-12-31] [--allow-missing]
    spark-submit jobs/replay_job.py --config FILE --plan JSON      (what the Airflow DAGs submit)
    spark-submit jobs/replay_job.py quality --config FILE --out DIR [--run-name ID]
    spark-submit jobs/replay_job.py tune --config FILE --against-live PATH --partitions A..B [grid, live options]
    spark-submit jobs/replay_job.py compare --config FILE --live PATH --partitions A..B [...]

Arguments (`replay run`'s; the Airflow DAGs pass --config and --plan, orchestration/chunks.py job_args):
    --config FILE         the job config (YAML); validated before the Spark session starts.
    --partition ID        replay only the source partition `dt=YYYY-MM-DD` (ID `YYYY-MM-DD`) or
                          `dt=YYYY-MM-DD/hour=HH` (ID `YYYY-MM-DDTHH`), arrival times [start, end) of that day/hour.
                          Outputs go to `<output.path>/<dataset>/dt=.../`, the carried state to
                          `<output.path>/_state/<ID>/`. Without it, the whole configured range is replayed.
    --partitions A..B     replay every partition of A..B (days or hours, inclusive) in order in this one Spark
                          application, exactly as one --partition job each would (outputs, state, one commit per
                          partition); rerun after a failure, it continues after the last committed partition.
    --first               the partition (a range's first) starts a history (no predecessor state). Otherwise the
                          state of the predecessor (the latest partition before ID with a source folder or a
                          state: history/partitions.py `predecessor`; or --previous) must exist and match the
                          config, else the job fails (exit 2) instead of silently starting over.
    --end-of-input        hold (default with --partition) or flush (the last partition of a history).
    --previous ID         the partition whose state to continue from (default: the latest one before ID).
    --allow-missing       a partition with no folder in the source replays as empty instead of failing.
    --plan JSON           a range's whole request as the DAG's planner serialised it once (pipeline.PartitionSpan
                          .to_dict: partitions, first, previous, end_of_input, missing); no other option with it.

`tune` as the first argument runs `replay tune` (with --against-live: the DAGs' optional calibrate task,
orchestration/calibrate_task.py); `compare` runs `replay compare` (the DAGs' optional compare_live task,
orchestration/compare_task.py).
`quality` as the first argument runs `replay quality` instead (the DAGs' data_quality task, quality_job.py): the GX
suites and the why-report on the config's outputs, Data Docs, why-report and data_quality.json into DIR.

Exit codes: 0 ok, 2 bad config, arguments or carried state, 1 any other failure.
Runs from a checkout without installing the package (src/ is put on the path), so a cluster only needs
this file, src/ (e.g. via --py-files) and the config.
"""
from __future__ import annotations

import sys
from pathlib import Path

_SRC = Path(__file__).resolve().parents[1] / "src"
if _SRC.is_dir() and str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

from event_replay.cli import main as replay_main  # noqa: E402


COMMANDS = ("quality", "compare", "tune")  # the other `replay` commands this entry runs when named first; else `replay run`


def main(argv: list[str] | None = None) -> int:
    """`replay run` itself (same validation, lock, commit and exit codes), or one of COMMANDS when named first;
    without --master the session takes spark-submit's master (or REPLAY_SPARK_MASTER)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return replay_main(argv if argv[:1] and argv[0] in COMMANDS else ["run", *argv])


if __name__ == "__main__":
    sys.exit(main())
