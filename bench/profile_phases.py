"""Where a replay's time goes, phase by phase, in one process (no event log needed).

    python bench/profile_phases.py --config bench/out/job-log-1m.yaml [--master local[2]] [--explain DIR]

Runs the `replay run` code path piece by piece (read + quarantine, engine stages, each output write) and prints,
per phase: wall seconds, CPU seconds of this process tree (JVM + Python), the JVM's JIT compile seconds (jcmd),
Spark jobs / stages / tasks started,
and for each engine output the size of its physical plan (lines, Exchange and Window operators). Only small
aggregates reach the driver. Timings depend on machine load: the 1-minute load average is printed with them.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from run import tree_cpu  # noqa: E402


def plan_stats(df, name: str, explain_dir: Path | None) -> str:
    text = df._jdf.queryExecution().executedPlan().toString()
    if explain_dir is not None:
        (explain_dir / f"{name}.txt").write_text(text)
    lines = text.splitlines()
    count = lambda pat: sum(1 for line in lines if re.search(pat, line))  # noqa: E731
    return (f"plan {len(lines)} lines, Exchange {count(r'Exchange ')}, Window {count(r'Window ')}, "
            f"SortMergeJoin {count('SortMergeJoin')}, BroadcastHashJoin {count('BroadcastHashJoin')}, "
            f"Python {count('ArrowEvalPython|BatchEvalPython|FlatMapGroupsInPandas')}")


class Phases:
    def __init__(self, spark):
        self.spark, self.sc = spark, spark.sparkContext
        self.rows: list[tuple] = []

    def _counts(self):
        st = self.sc.statusTracker()
        jobs = st.getJobIdsForGroup(None)
        stages = set()
        for j in jobs:
            info = st.getJobInfo(j)
            if info is not None:
                stages.update(info.stageIds)
        tasks = sum((st.getStageInfo(s).numTasks if st.getStageInfo(s) else 0) for s in stages)
        return len(jobs), len(stages), tasks

    def jvm_counters(self) -> tuple[float, float] | None:
        """The JVM's time compiling (HotSpot's java.ci.totalTime: elapsed time of compile tasks, summed over the
        compiler threads) and in garbage collection (sun.gc.collector.*.time, every collector), through jcmd: no
        stage's executor CPU includes either. None if jcmd is not there."""
        import subprocess
        pid = self.spark._jvm.java.lang.ProcessHandle.current().pid()
        try:
            out = subprocess.run(["jcmd", str(pid), "PerfCounter.print"], capture_output=True, text=True).stdout
        except OSError:
            return None
        ticks = re.search(r"java\.ci\.totalTime=(\d+)", out)
        freq = re.search(r"sun\.os\.hrt\.frequency=(\d+)", out)
        if not (ticks and freq):
            return None
        gc = sum(int(t) for t in re.findall(r"sun\.gc\.collector\.\d+\.time=(\d+)", out))
        hz = int(freq.group(1))
        return int(ticks.group(1)) / hz, gc / hz

    def run(self, name: str, fn):
        j0, s0, t0k = self._counts()
        jvm0 = self.jvm_counters()
        c0, w0, py0 = tree_cpu(os.getpid()), time.monotonic(), sum(os.times()[:2])
        out = fn()
        w1, c1, py1 = time.monotonic(), tree_cpu(os.getpid()), sum(os.times()[:2])
        j1, s1, t1k = self._counts()
        jvm1 = self.jvm_counters()
        jit = f", Python driver CPU {py1 - py0:.1f} s"
        if jvm0 is not None and jvm1 is not None:
            jit += f", JIT {jvm1[0] - jvm0[0]:.1f} s, GC {jvm1[1] - jvm0[1]:.1f} s"
        self.rows.append((name, w1 - w0, c1 - c0, j1 - j0, s1 - s0, t1k - t0k, os.getloadavg()[0]))
        print(f"phase {name}: {w1 - w0:.1f} s wall, {c1 - c0:.1f} CPU s{jit}, jobs {j1 - j0}, stages {s1 - s0}, "
              f"tasks {t1k - t0k}, load {os.getloadavg()[0]:.1f}", flush=True)
        self.top_stages()
        if getattr(self, "list_jobs", False):
            self.jobs()
        return out

    def jobs(self) -> None:
        """Every job of the phase: its wall time and the driver's gap before it (planning, Python, broadcasts)."""
        import datetime as dt
        import json
        import urllib.request
        url = self.sc.uiWebUrl
        if not url:
            return
        parse = lambda s: dt.datetime.strptime(s.replace("GMT", ""), "%Y-%m-%dT%H:%M:%S.%f")  # noqa: E731
        jobs = json.load(urllib.request.urlopen(f"{url}/api/v1/applications/{self.sc.applicationId}/jobs"))
        seen = getattr(self, "_seen_jobs", set())
        new = sorted((j for j in jobs if j["jobId"] not in seen and "completionTime" in j), key=lambda j: j["jobId"])
        self._seen_jobs = seen | {j["jobId"] for j in new}
        prev_end = None
        for j in new:
            t0, t1 = parse(j["submissionTime"]), parse(j["completionTime"])
            gap = (t0 - prev_end).total_seconds() if prev_end else 0.0
            prev_end = max(prev_end, t1) if prev_end else t1
            print(f"    job {j['jobId']}: {(t1 - t0).total_seconds():.2f} s, gap before {gap:.2f} s, "
                  f"stages {len(j['stageIds'])}: {j['name'][:70]}", flush=True)

    def top_stages(self, n: int = 8) -> None:
        """The phase's costliest stages (executor CPU) from the UI's REST API, with the code line that ran them."""
        import json
        import urllib.request
        url = self.sc.uiWebUrl
        if not url:
            return
        app = self.sc.applicationId
        stages = json.load(urllib.request.urlopen(f"{url}/api/v1/applications/{app}/stages?status=complete"))
        seen = getattr(self, "_seen", set())
        new = [s for s in stages if (s["stageId"], s["attemptId"]) not in seen]
        self._seen = seen | {(s["stageId"], s["attemptId"]) for s in stages}
        new.sort(key=lambda s: -s["executorCpuTime"])
        tot = sum(s["executorCpuTime"] for s in new) / 1e9
        print(f"  executor CPU in this phase's stages: {tot:.1f} s over {len(new)} stages", flush=True)
        for s in new[:n]:
            site = s.get("details", "").splitlines()
            where = next((x.strip() for x in site if "event_replay" in x or "bench/" in x), s["name"])
            print(f"  stage {s['stageId']}: cpu {s['executorCpuTime'] / 1e9:.1f} s, run {s['executorRunTime'] / 1e3:.1f} s, "
                  f"tasks {s['numTasks']}, in {s['inputRecords']}, shuffle r/w {s['shuffleReadRecords']}/"
                  f"{s['shuffleWriteRecords']}: {s['name'][:40]} @ {where[:110]}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--conf", action="append", default=[], help="KEY=VALUE Spark settings (repeatable)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="4g")
    ap.add_argument("--explain", default=None, help="directory for the physical plans")
    ap.add_argument("--jobs", action="store_true", help="list every job with the driver's gap before it")
    ap.add_argument("--naive", action="store_true", help="profile bench/run.py's naive job instead, as one phase")
    args = ap.parse_args()
    from event_replay import engine
    from event_replay.history.partitions import Clock
    from event_replay.io import read_source, write_outputs
    from event_replay.semantics.config import load_config
    from event_replay.spark import build_session

    cfg = load_config(args.config)
    extra = dict(kv.split("=", 1) for kv in args.conf)
    spark = build_session(master=args.master, conf={"spark.driver.memory": args.driver_memory, **extra})
    explain_dir = Path(args.explain) if args.explain else None
    if explain_dir:
        explain_dir.mkdir(parents=True, exist_ok=True)
    ph = Phases(spark)
    ph.list_jobs = args.jobs
    if args.naive:
        from run import naive
        import shutil
        shutil.rmtree(cfg.output.path, ignore_errors=True)
        ph.run("naive job", lambda: naive(spark, cfg, cfg.output.path))
        spark.stop()
        return 0
    c_start = tree_cpu(os.getpid())
    w_start = time.monotonic()
    source = ph.run("read+quarantine", lambda: read_source(spark, cfg))
    result, _ = ph.run("engine.replay", lambda: engine.replay(spark, source.rows, cfg, source.splits, Clock.of_source(source),
                                                              tick_partials=source.tick_partials))
    for name in ("windows", "late_events", "watermarks"):
        print(f"  {name}: {plan_stats(getattr(result, name), name, explain_dir)}", flush=True)
    import shutil
    shutil.rmtree(cfg.output.path, ignore_errors=True)
    summary = ph.run("write outputs", lambda: write_outputs(spark, cfg, source, result.windows,
                                                            result.late_events, result.watermarks,
                                                            result.watermarks_from_driver))
    total_w, total_c = time.monotonic() - w_start, tree_cpu(os.getpid()) - c_start
    print(f"total: {total_w:.1f} s wall, {total_c:.1f} CPU s; firings {summary.firings}, late {summary.late_rows}")
    source.release()
    engine.release(spark)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
