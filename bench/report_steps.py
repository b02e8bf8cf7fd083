"""What a backfill costs, step by step: the replay of a range and each report after it, in one Spark application.

    python bench/report_steps.py [--days 30] [--rows-per-day 5000] [--variants 4] [--out-dir bench/out/steps]
    python bench/report_steps.py --config bench/out/job-bursty-10m.yaml [--variants 4]    # a whole log instead


The partitioned sample (samples/days.py) of `--days` days is replayed as one range (`replay run --partitions`'s
run_range), then, on its outputs and in the same session: the comparison with a live output (the replay's own
firings: everything agrees, the cheapest comparison), the calibration of a grid of `--variants` idle timeouts against
it (`replay tune --against-live`, a DAG run's calibrate task, which runs before the comparison there), the GX suites
and the why-report. Each step's wall and CPU time, its ratios to the replay's and its Spark jobs (spark_jobs.py) are
printed as a Markdown table. With --config, the job's whole (unpartitioned)
source is replayed instead (`replay run`'s run_replay), its output redirected under --out-dir, and the same reports
follow; the grid's idle timeouts are the job's own times 1..N. The replay runs first, so its JVM is the coldest:
the ratios of the steps after it are, if anything, flattering. No timing is asserted anywhere.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import psutil
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _cpu_seconds() -> float:
    """User + system CPU of this process and its children alive now (the JVM of the session among them)."""
    me = psutil.Process()
    times = [p.cpu_times() for p in [me, *me.children(recursive=True)]]
    return sum(t.user + t.system for t in times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--rows-per-day", type=int, default=5000)
    ap.add_argument("--variants", type=int, default=4)
    ap.add_argument("--out-dir", default=str(ROOT / "bench" / "out" / "steps"))
    ap.add_argument("--config", help="a job config over a whole log (bench/out/job-bursty-10m.yaml): no sample")
    ap.add_argument("--skip", action="append", default=[], choices=["compare", "calibration", "GX suites",
                                                                    "why-report"],
                    help="a step after the replay not to run (repeatable): to time the others within a deadline")
    args = ap.parse_args()

    from event_replay import cli
    from event_replay.job import run_replay
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
    if args.config:
        raw = yaml.safe_load(Path(args.config).read_text())
        raw["output"]["path"] = str(out / "replay")
        ids, idle_ms = None, int(load_config(args.config).watermark.idle_timeout_ms or 5000)
        what = f"{Path(raw['source']['path']).name} (the whole log)"
    else:
        ids = write_days(out / "log", generate_days(days=args.days, rows_per_day=args.rows_per_day))
        raw = yaml.safe_load((ROOT / "jobs" / "configs" / "demo_partitioned.yaml").read_text())
        raw["source"]["path"], raw["output"]["path"] = str(out / "log"), str(out / "replay")
        idle_ms = 5000
        what = f"{args.days} days x {args.rows_per_day} rows ({len(ids)} partitions)"
    (out / "job.yaml").write_text(yaml.safe_dump(raw))
    cfg = load_config(out / "job.yaml")
    spark = build_session(app_name="bench-report-steps")
    idle = ",".join(f"{idle_ms * (i + 1)}ms" for i in range(args.variants))
    span = ["--partitions", f"{ids[0]}..{ids[-1]}"] if ids else []

    def replay():
        if ids is None:
            return run_replay(spark, cfg)
        return run_range(spark, cfg, PartitionSpan.between(ids[0], ids[-1], True, None, "flush", False),
                         progress=lambda line: None)

    steps = [
        ("replay", replay),
        ("compare", lambda: cli.main(["compare", "--config", str(out / "job.yaml"), "--live",
                                      str(out / "replay" / "windows"), "--live-keeps-updates", *span,
                                      "--out", str(out / "run" / "compare"), "--report-only"])),
        # the DAG's calibrate task's job (`replay tune --against-live`, on this session: it leaves it on)
        (f"calibration ({args.variants} variants)", lambda: cli.main([
            "tune", "--config", str(out / "job.yaml"), "--against-live", str(out / "replay" / "windows"),
            "--live-keeps-updates", *span, "--idle-timeout", idle])),
        ("GX suites", lambda: validate(cfg.output.path, cfg, docs_dir=str(out / "run" / "_data_docs"), spark=spark)),
        ("why-report", lambda: why_report(cfg.output.path, cfg, spark=spark, report_dir=out / "run" / "why_report")),
    ]
    steps = [(name, step) for name, step in steps if name.split(" (")[0] not in args.skip]
    rows = []
    for name, step in steps:
        t, cpu = time.monotonic(), _cpu_seconds()
        with counted(spark, name) as jobs:
            step()
        rows.append((name, time.monotonic() - t, _cpu_seconds() - cpu, jobs.jobs))
        print(f"bench: {name}: {rows[-1][1]:.1f} s, {rows[-1][2]:.1f} CPU s, {jobs.jobs} Spark jobs", file=sys.stderr,
              flush=True)
    replay_s, replay_cpu = rows[0][1], rows[0][2]
    print(f"\n{what}, one Spark application\n")
    print("| step | wall s | x replay | CPU s | x replay | Spark jobs |\n| --- | ---: | ---: | ---: | ---: | ---: |")
    after = rows[1:]  # a DAG run's steps after the replay, one each
    total = ("all after the replay", sum(r[1] for r in after), sum(r[2] for r in after),
             sum(r[3] for r in after))
    for name, s, cpu, jobs in [*rows, total]:
        print(f"| {name} | {s:.1f} | {s / replay_s:.2f} | {cpu:.1f} | {cpu / replay_cpu:.2f} | {jobs} |")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
