"""One day partition, whole process: `replay run --partition D --first` against a naive Spark job on the same folder.

    python bench/partition_day.py [--rows-per-day 5000] [--reps 3] [--out-dir bench/out/day] [--old-tree DIR]
                                  [--continued]

Both are fresh processes timed from start to exit (JVM start-up, session, read, work, write), interleaved per
repetition; the median is reported with CPU seconds of each process tree. The naive job is bench/run.py's
`naive` worker (a plain groupBy(key, window(event_time)) written to Parquet) on the day's folder, twice: on the
driver JVM a plain Spark job gets (`naive`), and on the one `replay run` starts for this input (`naive-same-jvm`:
the project's class archive and quick compiler, event_replay/driver_jvm.py), so the engine's own cost shows apart. The replay's
number of Spark jobs is read from its event log (one SparkListenerJobStart line per job). `--old-tree`: a checkout
of an older engine (its jar built or copied into src/event_replay/jvm/) whose replay runs beside, interleaved (old,
naive, new). Spark's defaults: local[*], a 1 GB driver (`--driver-memory`). No timing is asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from run import run_measured  # noqa: E402

FIRST_DAY = "2024-01-01"


def timed(cmd: list[str], env: dict | None = None) -> dict:
    r = run_measured(cmd, env=env)
    if r["rc"] != 0:
        raise SystemExit(f"{cmd[:3]} failed ({r['rc']}):\n{r['stderr']}")
    return {"wall_s": r["total_s"], "cpu_s": r["cpu_s"]}


def spark_jobs(event_dir: Path) -> int:
    # Spark 4 writes rolling event logs: a folder eventlog_v2_<app>/ of events_<n>_<app> files.
    logs = [p for p in event_dir.rglob("*") if p.is_file() and p.name.startswith(("events_", "app-", "local-"))]
    return sum(line.count('"Event":"SparkListenerJobStart"') for p in logs for line in p.open())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows-per-day", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out-dir", default=str(ROOT / "bench" / "out" / "day"))
    ap.add_argument("--old-tree", type=Path, default=None)
    ap.add_argument("--driver-memory", default="1g")
    ap.add_argument("--continued", action="store_true", help="replay the second day, continuing the first's state")
    args = ap.parse_args()
    day = "2024-01-02" if args.continued else FIRST_DAY
    out = Path(args.out_dir)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    py = sys.executable
    subprocess.run([py, "-m", "event_replay.samples.days", "--out", str(out / "log"), "--days", "2" if args.continued else "1",
                    "--rows-per-day", str(args.rows_per_day)], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    cfg = yaml.safe_load((ROOT / "jobs" / "configs" / "demo_partitioned.yaml").read_text())
    cfg["source"]["path"] = str(out / "log")
    cfg["output"]["path"] = str(out / "replay")
    (out / "replay.yaml").write_text(yaml.safe_dump(cfg))
    naive_cfg = {**cfg, "source": {**cfg["source"], "path": str(out / "log" / f"dt={day}")}}
    (out / "naive.yaml").write_text(yaml.safe_dump(naive_cfg))
    replay_cmd = [py, "-c", "import sys; from event_replay.cli import main; sys.exit(main())", "run",
                  "--config", str(out / "replay.yaml"), "--master", "local[*]",
                  "--conf", f"spark.driver.memory={args.driver_memory}"]
    if args.continued:  # the first day's outputs and state, restored before each timed run
        timed([*replay_cmd, "--partition", FIRST_DAY, "--first"], env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        shutil.copytree(out / "replay", out / "after-first-day")
    trees = {"replay": ROOT} if args.old_tree is None else {"old": args.old_tree.resolve(), "replay": ROOT}
    runs: dict[str, list[dict]] = {name: [] for name in (*trees, "naive")}
    for rep in range(args.reps):
        for name, tree in trees.items():
            events = out / f"events-{name}-{rep}"
            events.mkdir()
            shutil.rmtree(out / "replay", ignore_errors=True)
            if args.continued:
                shutil.copytree(out / "after-first-day", out / "replay")
            r = timed([*replay_cmd, "--partition", day, *([] if args.continued else ["--first"]),
                       "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={events}",
                       "--conf", "spark.eventLog.compress=false"], env={**os.environ, "PYTHONPATH": str(tree / "src")})
            r["spark_jobs"] = spark_jobs(events)
            runs[name].append(r)
            if name == "replay":
                for naive, jvm in (("naive", "plain"), ("naive-same-jvm", "product")):
                    runs.setdefault(naive, []).append(timed([
                        py, str(ROOT / "bench" / "run.py"), "worker", "--mode", "naive", "--jvm", jvm, "--config",
                        str(out / "naive.yaml"), "--master", "local[*]", "--driver-memory", args.driver_memory,
                        "--out", str(out / f"{naive}-{rep}")]))
        print(f"rep {rep + 1}: " + ", ".join(f"{m} {rs[-1]}" for m, rs in runs.items()), flush=True)
    med = {m: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for m, rs in runs.items()}
    for name in trees:
        for naive in ("naive", "naive-same-jvm"):
            med[f"ratio_wall_{name}/{naive}"] = round(med[name]["wall_s"] / med[naive]["wall_s"], 2)
            med[f"ratio_cpu_{name}/{naive}"] = round(med[name]["cpu_s"] / med[naive]["cpu_s"], 2)
    med["load_avg"] = os.getloadavg()[0]
    print(json.dumps(med, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
