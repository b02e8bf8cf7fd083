"""One tree's report steps on an existing replay output (the tree on PYTHONPATH): compare with the demo's live
stand-in (no settings search, no calibration grid) and the GX suites, each timed and its Spark jobs counted."""
import sys, time
from pathlib import Path
OUT = Path(sys.argv[1]); ROOT = Path("/work/wt/t46b"); tag = sys.argv[2]
from event_replay import cli
from event_replay.quality.validation import validate
from event_replay.semantics.config import load_config
from event_replay.spark import build_session
from event_replay.spark_jobs import counted
import event_replay; assert str(event_replay.__file__).startswith(sys.argv[3]), event_replay.__file__
cfg = load_config(OUT / "job.yaml")
spark = build_session(app_name="t46b-ab")
live = ROOT / "jobs/live/demo"
days = sorted(p.name[3:] for p in (OUT / "log").glob("dt=*"))
args = ["compare", "--config", str(OUT / "job.yaml"), "--live", str(live / "firings"), "--live-format", "json",
        "--partitions", f"{days[0]}..{days[-1]}", "--out", str(OUT / f"run-{tag}" / "compare"),
        "--min-agreement", "90.0", "--report-only",
        "--live-columns", "key=key_id,window_start=win_start,window_end=win_end,cnt=events,total=amount,fire_watermark=wm",
        "--live-late", str(live / "late"), "--live-keeps-updates"]
if "d30" in str(OUT):  # against the replay's own firings (everything agrees), as bench/report_steps.py
    args = ["compare", "--config", str(OUT / "job.yaml"), "--live", str(OUT / "replay" / "windows"),
            "--live-keeps-updates", "--partitions", f"{days[0]}..{days[-1]}", "--out", str(OUT / f"run-{tag}" / "compare"),
            "--report-only"]
for name, step in (("compare", lambda: cli.main(args)),
                   ("GX suites", lambda: validate(cfg.output.path, cfg, docs_dir=str(OUT / f"run-{tag}" / "_data_docs"), spark=spark))):
    t = time.monotonic()
    with counted(spark, name) as jobs:
        step()
    print(f"RESULT {tag} {name}: {time.monotonic() - t:.1f} s, {jobs.jobs} jobs", flush=True)
spark.stop()
