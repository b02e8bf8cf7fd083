"""What a backfill costs, step by step: the replay of a range and each report after it, in one Spark application.

    python bench/report_steps.py [--days 30] [--rows-per-day 5000] [--variants 4] [--out-dir bench/out/steps]

The partitioned sample (samples/days.py) of `--days` days is replayed as one range (`replay run --partitions`'s
run_range), then, on its outputs and in the same session: the comparison with a live output (the replay's own
firings: everything agrees, the cheapest comparison), the calibration of a grid of `--variants` idle timeouts against
it (`replay tune --against-live`, a DAG run's calibrate task, which runs before the comparison there), the GX suites
and the why-report. Each step's wall time, its ratio to the replay's and
its Spark jobs (spark_jobs.py) are printed as a Markdown table. The replay runs first, so its JVM is the coldest:
the ratios of the steps after it are, if anything, flattering. No timing is asserted anywhere.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--rows-per-day", type=int, default=5000)
    ap.add_argument("--variants", type=int, default=4)
    ap.add_argument("--out-dir", default=str(ROOT / "bench" / "out" / "steps"))
    args = ap.parse_args()

    from event_replay import cli
    from event_replay.pipeline import PartitionSpan
    from event_replay.quality.validation import validate
    from event_replay.range_replay import run_range
    from event_replay.samples.days import generate_days, write_days
    from event_replay.semantics.config import load_config
    from event_replay.spark import build_session
    from event_replay.spark_jobs import counted
    from event_replay.why.report import why_report

    out = Path(args.out_dir)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    ids = write_days(out / "log", generate_days(days=args.days, rows_per_day=args.rows_per_day))
    raw = yaml.safe_load((ROOT / "jobs" / "configs" / "demo_partitioned.yaml").read_text())
    raw["source"]["path"], raw["output"]["path"] = str(out / "log"), str(out / "replay")
    (out / "job.yaml").write_text(yaml.safe_dump(raw))
    cfg = load_config(out / "job.yaml")
    spark = build_session(app_name="bench-report-steps")
    idle = ",".join(f"{5 * (i + 1)}s" for i in range(args.variants))
    steps = [
        ("replay", lambda: run_range(spark, cfg, PartitionSpan.between(ids[0], ids[-1], True, None, "flush", False),
                                     progress=lambda line: None)),
        ("compare", lambda: cli.main(["compare", "--config", str(out / "job.yaml"), "--live",
                                      str(out / "replay" / "windows"), "--live-keeps-updates", "--partitions",
                                      f"{ids[0]}..{ids[-1]}", "--out", str(out / "run" / "compare"),
                                      "--report-only"])),
        # the DAG's calibrate task's job (`replay tune --against-live`, on this session: it leaves it on)
        (f"calibration ({args.variants} variants)", lambda: cli.main([
            "tune", "--config", str(out / "job.yaml"), "--against-live", str(out / "replay" / "windows"),
            "--live-keeps-updates", "--partitions", f"{ids[0]}..{ids[-1]}", "--idle-timeout", idle])),
        ("GX suites", lambda: validate(cfg.output.path, cfg, docs_dir=str(out / "run" / "_data_docs"), spark=spark)),
        ("why-report", lambda: why_report(cfg.output.path, cfg, spark=spark, report_dir=out / "run" / "why_report")),
    ]
    rows = []
    for name, step in steps:
        t = time.monotonic()
        with counted(spark, name) as jobs:
            step()
        rows.append((name, time.monotonic() - t, jobs.jobs))
        print(f"bench: {name}: {rows[-1][1]:.1f} s, {jobs.jobs} Spark jobs", file=sys.stderr, flush=True)
    replay_s = rows[0][1]
    print(f"\n{args.days} days x {args.rows_per_day} rows ({len(ids)} partitions), one Spark application\n")
    print("| step | wall s | x replay | Spark jobs |\n| --- | ---: | ---: | ---: |")
    for name, s, jobs in rows:
        print(f"| {name} | {s:.1f} | {s / replay_s:.2f} | {jobs} |")
    after = rows[1:]  # a DAG run's steps after the replay, one each
    total = sum(s for _, s, _ in after)
    print(f"| all after the replay | {total:.1f} | {total / replay_s:.2f} | "
          f"{sum(j for *_, j in after)} |")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
