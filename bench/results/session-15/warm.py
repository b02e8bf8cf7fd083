"""The replay's fixed cost: the same job run N times in one JVM (one session), job CPU of each run.
python warm.py replay|naive CONFIG OUT N"""
import os, sys, time
sys.path.insert(0, "bench")
import run as benchrun
from event_replay.semantics.config import load_config
from event_replay.spark import build_session
mode, cfgp, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
cfg = load_config(cfgp)
spark = build_session(master="local[2]", app_name="warm", conf={})
from event_replay.job import run_replay
for i in range(n):
    c0, t0 = benchrun.tree_cpu(os.getpid()), time.monotonic()
    if mode == "replay":
        s = run_replay(spark, cfg)
        info = (s.firings, s.late_rows)
    else:
        info = benchrun.naive(spark, cfg, out)
    print(f"WARM {mode} run {i}: job {time.monotonic() - t0:.2f} s, cpu {benchrun.tree_cpu(os.getpid()) - c0:.2f} s {info}", flush=True)
spark.stop()
