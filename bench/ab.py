"""Before/after of an engine change, side by side: the replay of an older tree, the naive job and this tree's replay,
interleaved run by run on the same log (each a fresh process through `bench/run.py worker`).

    git worktree add -f /tmp/old <commit>
    python bench/ab.py --old-tree /tmp/old --rows 10000000 --reps 3 [--config bench/configs/headline.yaml]

Prints every run (job seconds, job CPU seconds, whole process, firings, late rows, driver peak) and the medians.
The log and job config are bench/run.py's (generated on first use). No timing is asserted anywhere.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import BENCH, default_config, ensure_log, job_config, run_measured, shape_label  # noqa: E402

KEYS = ("job_s", "job_cpu_s", "total_s", "firings", "late_rows", "driver_peak_mb", "jvm_peak_mb")


def one(tree: Path, mode: str, cfg: Path, out: Path, args, memory: str) -> dict:
    cmd = [sys.executable, str(tree / "bench" / "run.py"), "worker", "--mode", mode, "--config", str(cfg),
           "--master", args.master, "--driver-memory", memory, "--out", str(out)]
    r = run_measured(cmd, cwd=tree, timeout=args.timeout)
    if r["rc"] != 0:
        raise SystemExit(f"{tree} {mode} failed:\n{r['stderr']}")
    line = next(x for x in r["stdout"].splitlines() if x.startswith("BENCH_RESULT "))
    r.update(json.loads(line[len("BENCH_RESULT "):]))
    return {k: r.get(k) for k in KEYS}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old-tree", required=True, type=Path)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--shape", choices=("headline", "bursty", "bursty-int"), default="headline")
    ap.add_argument("--config", default=None, help="job config (default: bench/configs/<shape>.yaml)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="4g", help="'default': what replay run picks")
    ap.add_argument("--old-driver-memory", default=None,
                    help="the old tree's (default: --driver-memory; a tree before c69a7d7 knows no 'default': 1g, "
                         "Spark's own, is what its users had)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-dir", default=str(BENCH / "data"))
    ap.add_argument("--out-dir", default=str(BENCH / "out"))
    ap.add_argument("--timeout", type=float, default=4 * 3600)
    args = ap.parse_args()
    args.out_dir = str(Path(args.out_dir).resolve())
    args.old_driver_memory = args.old_driver_memory or args.driver_memory
    args.config = default_config(args)  # the old tree's runs start in that tree
    log = ensure_log(args.rows, args)
    runs: dict[str, list[dict]] = {"old": [], "naive": [], "new": []}
    plan = [("old", args.old_tree.resolve(), "replay"), ("naive", HERE.parent, "naive"), ("new", HERE.parent, "replay")]
    for rep in range(args.reps):
        for name, tree, mode in plan:
            out = Path(args.out_dir) / f"ab-{name}-{shape_label(args.rows, args)}"
            cfg = job_config(log, out, argparse.Namespace(config=args.config, out_dir=str(Path(args.out_dir) / name)))
            memory = args.old_driver_memory if name == "old" else args.driver_memory
            r = one(tree, mode, cfg, out, args, memory)
            runs[name].append(r)
            print(rep, name, r, flush=True)
    for name, rs in runs.items():
        print(f"{name} median job_s {statistics.median(r['job_s'] for r in rs)} "
              f"cpu {statistics.median(r['job_cpu_s'] for r in rs)} total {statistics.median(r['total_s'] for r in rs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
