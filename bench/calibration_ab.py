"""A calibration grid's cost beside one replay, in one Spark application (issue 46: "a 4-variant calibration
<= 2x one replay"):

    python bench/calibration_ab.py --log DIR [--variants 4] [--late] [--config bench/configs/bursty.yaml]

The partitioned sample in DIR (samples/days.py; generated there with --days D if DIR is empty) is replayed as one
range twice (`replay run --partitions`'s run_range; the first warms the JVM), then calibrated as the compare task
does it: `--variants` idle timeouts (5s, 10s, ...) replayed over the source and each matched with the live output
(the replay's own windows, and with --late its late rows). Prints one line: the replays' and the calibration's
wall times, their ratio and Spark jobs (spark_jobs.counted). Run it with another checkout's `PYTHONPATH=<it>/src`
to compare two versions side by side (interleave the processes); no timing is asserted anywhere. `--config`: another
job config (its source and output paths replaced), e.g. bench/configs/bursty.yaml over a bursty log in dt= folders
(bench/bursty_days.py).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log", required=True, help="the partitioned sample's folder (generated if missing)")
    ap.add_argument("--days", type=int, default=3)
    ap.add_argument("--rows-per-day", type=int, default=5000)
    ap.add_argument("--variants", type=int, default=4)
    ap.add_argument("--late", action="store_true", help="match the late rows too")
    ap.add_argument("--config", default=str(ROOT / "jobs" / "configs" / "demo_partitioned.yaml"),
                    help="the job config (default: the demo's partitioned one)")
    args = ap.parse_args()

    from event_replay.compare.live_spec import LiveSpec
    try:  # this tree's plan of a range; a checkout before 49's one plan type named it RangeRequest
        from event_replay.pipeline import PartitionSpan
        whole_range = PartitionSpan.between
    except (ImportError, AttributeError):
        from event_replay.history.progress import RangeRequest as whole_range
    from event_replay.range_replay import run_range
    from event_replay.samples.days import generate_days, write_days
    from event_replay.semantics.config import load_config
    from event_replay.spark import build_session
    from event_replay.spark_jobs import counted
    from event_replay.tuning import calibrate, parse_grid
    from event_replay.tuning.runner import run_tuning

    log = Path(args.log)
    if not log.exists():
        write_days(log, generate_days(days=args.days, rows_per_day=args.rows_per_day))
    ids = sorted(p.name.split("=", 1)[1] for p in log.iterdir() if p.name.startswith("dt="))
    out = Path(tempfile.mkdtemp(prefix="calibration-ab-"))
    raw = yaml.safe_load(Path(args.config).read_text())
    raw["source"]["path"], raw["output"]["path"] = str(log), str(out / "replay")
    (out / "job.yaml").write_text(yaml.safe_dump(raw))
    cfg = load_config(out / "job.yaml")
    spark = build_session(app_name="bench-calibration-ab")
    try:
        replays = []
        for _ in range(2):
            t = time.monotonic()
            with counted(spark, "replay") as replay_jobs:
                run_range(spark, cfg, whole_range(ids[0], ids[-1], True, None, "flush", False),
                          progress=lambda line: None)
            replays.append(time.monotonic() - t)
        spec = LiveSpec(path=str(out / "replay" / "windows"), keeps_updates=True,
                        late_path=str(out / "replay" / "late_events") if args.late else None)
        grid, variants = parse_grid(cfg, None, ",".join(f"{5 * (i + 1)}s" for i in range(args.variants)))
        t = time.monotonic()
        with counted(spark, "calibration") as jobs:
            result = run_tuning(spark, cfg, grid, variants, log=lambda m: None,
                                per_variant=calibrate.per_variant(spark, cfg, spec))
        s = time.monotonic() - t
        scores = [r["live_score"] for r in result.rows]
        print(f"{len(ids)} days: replay {replays[0]:.1f} s (cold), {replays[1]:.1f} s ({replay_jobs.jobs} jobs); "
              f"calibration ({args.variants} variants) {s:.1f} s = {s / replays[1]:.2f}x the warm replay, "
              f"{jobs.jobs} jobs; scores {scores}", flush=True)
    finally:
        spark.stop()
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
