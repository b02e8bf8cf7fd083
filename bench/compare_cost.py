"""The cost of `replay compare` next to the replay's, on a generated log (its last figure, 2.7x the replay at 10M:
`git show e98f581:bench/results/SESSIONS.md`, "replay compare at 10M rows"; the current one per step is
bench/report_steps.py's).

    nice python bench/compare_cost.py --rows 10000000 [--work bench/out/compare-10m] [--master local[2]]

Steps, each a fresh `replay` process (JVM start included, as a user runs it; wall seconds and the CPU seconds of
the process tree):
1. `replay run` of the headline job (bench/configs/headline.yaml) on the log (made by bench/generate.py if missing);
2. the same job with another idle timeout (5 s instead of 1 min) into a second output: a "live" job that differs;
3. `replay compare` with the replay's own windows as the live output (a sink's column names, Parquet): full
   agreement, the matching alone;
4. `replay compare` against the second output's windows and late rows (--live-late): differences, every one
   explained (late rows, holders, idle spans, one scan of the source for the windows lacking rows).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from run import run_measured  # noqa: E402
REPLAY = str(Path(sys.executable).with_name("replay"))
COLUMNS = "key=user,window_start=w_start,window_end=w_end,cnt=events,total=amount,max_value=hi,fire_watermark=wm"


def _run(cmd: list[str]) -> tuple[float, float, int, str, float]:
    """Wall seconds, CPU seconds of the whole process tree (the JVM included: bench/run.py's sampler), exit code,
    the output's last lines, and the machine's 1-minute load average when it started (the machine may be shared)."""
    load = os.getloadavg()[0]
    r = run_measured(cmd)
    out = (r["stdout"] + r["stderr"]).strip().splitlines()
    return r["total_s"], r["cpu_s"], r["rc"], "\n".join(out[-6:]), load


def _config(work: Path, log: Path, out: str, **watermark) -> Path:
    raw = yaml.safe_load((ROOT / "bench" / "configs" / "headline.yaml").read_text())
    raw["source"]["path"], raw["output"]["path"] = str(log), str(work / out)
    raw["watermark"].update(watermark)
    path = work / f"{out}.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def _as_sink(output: Path, target: Path) -> None:
    """An output's windows/ as a live sink (its own column names, every firing) and late_events/ as the side output."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    target.mkdir(parents=True, exist_ok=True)
    w = ds.dataset(output / "windows").to_table(columns=["key", "window_start", "window_end", "cnt", "total",
                                                         "max_value", "fire_watermark_ms"])
    pq.write_table(w.rename_columns(["user", "w_start", "w_end", "events", "amount", "hi", "wm"]),
                   target / "firings.parquet")
    late = target / "late"
    late.mkdir(exist_ok=True)
    pq.write_table(ds.dataset(output / "late_events").to_table(), late / "late.parquet")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--work", default=None)
    ap.add_argument("--master", default="local[2]")
    a = ap.parse_args(argv)
    tag = f"{a.rows // 1_000_000}m" if a.rows >= 1_000_000 else str(a.rows)
    work = Path(a.work or ROOT / "bench" / "out" / f"compare-{tag}")
    work.mkdir(parents=True, exist_ok=True)
    log = ROOT / "bench" / "data" / f"log-{tag}"
    if not log.exists():
        subprocess.run([sys.executable, str(ROOT / "bench" / "generate.py"), "--out", str(log), "--rows",
                        str(a.rows)], check=True)
    results = {}
    master = ["--master", a.master]
    steps = [
        ("replay run (headline job)", [REPLAY, "run", "--config", str(_config(work, log, "replay")), *master]),
        ("replay run (idle timeout 5 s: the 'live' job)",
         [REPLAY, "run", "--config", str(_config(work, log, "live", idle_timeout="5s")), *master]),
    ]
    for name, cmd in steps:
        results[name] = _run(cmd)
        print(f"{name}: {results[name][0]:.1f} s wall, {results[name][1]:.1f} s CPU, exit {results[name][2]}, "
              f"load {results[name][4]:.1f} at the start\n{results[name][3]}", flush=True)
    _as_sink(work / "replay", work / "sink-same")
    _as_sink(work / "live", work / "sink-other")
    cfg = str(work / "replay.yaml")
    compares = [
        ("replay compare, live = the replay's own firings (full agreement)",
         [REPLAY, "compare", "--config", cfg, "--live", str(work / "sink-same" / "firings.parquet"),
          "--live-columns", COLUMNS, "--live-late", str(work / "sink-same" / "late"), "--live-keeps-updates",
          "--out", str(work / "compare-same"), *master]),
        ("replay compare, live = idle timeout 5 s (differences explained)",
         [REPLAY, "compare", "--config", cfg, "--live", str(work / "sink-other" / "firings.parquet"),
          "--live-columns", COLUMNS, "--live-late", str(work / "sink-other" / "late"), "--live-keeps-updates",
          "--out", str(work / "compare-other"), *master]),
    ]
    for name, cmd in compares:
        results[name] = _run(cmd)
        print(f"{name}: {results[name][0]:.1f} s wall, {results[name][1]:.1f} s CPU, exit {results[name][2]}, "
              f"load {results[name][4]:.1f} at the start\n{results[name][3]}", flush=True)
    (work / "results.json").write_text(json.dumps({k: {"wall_s": v[0], "cpu_s": v[1], "exit": v[2], "tail": v[3],
                                                       "load_1m": v[4]}
                                                   for k, v in results.items()}, indent=2))
    print(f"load average at the end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
