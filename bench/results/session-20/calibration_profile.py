"""Where a calibration's time goes: cProfile of the driver around run_tuning, and the Spark jobs it ran with the
time before each job's submission (planning, driver-side code generation) vs the job's own duration."""
import argparse, cProfile, io, pstats, sys, time, tempfile, shutil
from pathlib import Path
import yaml

ap = argparse.ArgumentParser()
ap.add_argument("--log", required=True)
ap.add_argument("--config", default=None)
ap.add_argument("--variants", type=int, default=4)
ap.add_argument("--top", type=int, default=25)
ap.add_argument("--bench-root", default="/work/wt/t46c")
a = ap.parse_args()
ROOT = Path(a.bench_root)
from event_replay.compare.live_spec import LiveSpec
from event_replay.pipeline import PartitionSpan
from event_replay.range_replay import run_range
from event_replay.semantics.config import load_config
from event_replay.spark import build_session
from event_replay.spark_jobs import counted
from event_replay.tuning import calibrate, parse_grid
from event_replay.tuning.runner import run_tuning
import event_replay
print("tree:", event_replay.__file__, flush=True)

log = Path(a.log)
ids = sorted(p.name.split("=", 1)[1] for p in log.iterdir() if p.name.startswith("dt="))
out = Path(tempfile.mkdtemp(prefix="t46c-prof-"))
raw = yaml.safe_load(Path(a.config or ROOT / "jobs/configs/demo_partitioned.yaml").read_text())
raw["source"]["path"], raw["output"]["path"] = str(log), str(out / "replay")
(out / "job.yaml").write_text(yaml.safe_dump(raw))
cfg = load_config(out / "job.yaml")
spark = build_session(app_name="t46c-prof")
sc = spark.sparkContext
for _ in range(2):
    t = time.monotonic()
    run_range(spark, cfg, PartitionSpan.between(ids[0], ids[-1], True, None, "flush", False), progress=lambda l: None)
    print(f"replay {time.monotonic() - t:.1f} s", flush=True)
spec = LiveSpec(path=str(out / "replay" / "windows"), keeps_updates=True, late_path=str(out / "replay" / "late_events"))
grid, variants = parse_grid(cfg, None, ",".join(f"{5 * (i + 1)}s" for i in range(a.variants)))
prof = cProfile.Profile()
t0 = time.time()
with counted(spark, "calibration") as jobs:
    prof.enable()
    run_tuning(spark, cfg, grid, variants, log=lambda m: None, per_variant=calibrate.per_variant(spark, cfg, spec))
    prof.disable()
t1 = time.time()
print(f"calibration {t1 - t0:.1f} s, {jobs.jobs} jobs", flush=True)
store = sc._jsc.sc().statusStore()
lst = store.jobsList(None)
rows = []
for k in range(lst.size()):
    j = lst.apply(k)
    sub = j.submissionTime()
    comp = j.completionTime()
    if not sub.isDefined() or sub.get().getTime() / 1000 < t0:
        continue
    s = sub.get().getTime() / 1000
    e = comp.get().getTime() / 1000 if comp.isDefined() else float("nan")
    rows.append((s, e, j.jobId(), f"{j.name()} [stages {j.stageIds().size()}, tasks {j.numTasks()}]"))
rows.sort()
prev = t0
exec_total = 0.0
print("| job | before it (s) | job (s) | call site |")
for s, e, jid, name in rows:
    print(f"| {jid} | {s - prev:.2f} | {e - s:.2f} | {name[:130]} |")
    exec_total += e - s
    prev = e
print(f"jobs' own time {exec_total:.1f} s of {t1 - t0:.1f} s; outside jobs {t1 - t0 - exec_total:.1f} s")
buf = io.StringIO()
st = pstats.Stats(prof, stream=buf).sort_stats("cumulative")
st.print_stats(a.top)
print(buf.getvalue())
spark.stop()
shutil.rmtree(out, ignore_errors=True)
