"""Real-shaped logs on default settings: does `replay run` complete with no memory setting at all? (issue 34)

    python bench/defaults.py [--cases bursty-3m,bursty-3m-sessions,...] [--data-dir bench/data]

Each case is the `replay` command a new user runs, in a fresh process, with no `--conf` and no
REPLAY_LOCAL_DRIVER_MEMORY: what it completes in, the exit code, the summary line's heap figures, the peak RSS
of the Python driver and of the JVM. Logs are bench/bursty.py's shape (variants below), generated once.
Results: bench/results/defaults.json and a markdown table on stdout. No timing is asserted anywhere.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bursty import BurstyProfile, chunks  # noqa: E402
from generate import write_chunks  # noqa: E402
from run import label, run_measured  # noqa: E402

REPLAY = str(Path(sys.executable).parent / "replay")

# name -> (log profile, changes to bench/configs/bursty.yaml, extra command arguments)
CASES = {
    "bursty-3m": (BurstyProfile(rows=3_000_000), {}, None),
    "bursty-3m-sessions": (BurstyProfile(rows=3_000_000), {"window": {"type": "session", "gap": "2s",
                                                                      "size": None}}, None),
    "bursty-3m-tune-4": (BurstyProfile(rows=3_000_000), {},
                         ["tune", "--max-out-of-orderness", "500ms,2s", "--idle-timeout", "none,1500ms"]),
    "bursty-3m-hot-key-30pct": (BurstyProfile(rows=3_000_000, hot_key_share=0.3), {}, None),
    # 32 splits, a row every 4 s each outside pauses: 7 days, every gap near or past the idle timeout.
    "sparse-32-splits-7-days": (BurstyProfile(rows=4_850_000, splits=32, gap_ms=4_000.0),
                                {"source": {"splits": [f"p{i:02d}" for i in range(33)]}}, None),
    "bursty-30m": (BurstyProfile(rows=30_000_000), {}, None),
}


def ensure(name: str, p: BurstyProfile, data_dir: Path) -> Path:
    path = data_dir / f"defaults-{name.split('-tune')[0].split('-sessions')[0]}-{label(p.rows)}"
    meta = {"shape": "bursty", "profile": p.__dict__}
    manifest = path / "_bench.json"
    if not (manifest.exists() and json.loads(manifest.read_text()).get("profile") == meta["profile"]):
        write_chunks(path, chunks(p), meta, quiet=True)
    return path


def merged(base: dict, change: dict) -> dict:
    """`base` with `change` applied key by key (None removes a key)."""
    out = dict(base)
    for k, v in change.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merged(base.get(k, {}), v) if isinstance(v, dict) else v
    return out


def run_case(name: str, data_dir: Path, out_dir: Path, timeout: float) -> dict:
    profile, change, command = CASES[name]
    log = ensure(name, profile, data_dir)
    cfg = merged(yaml.safe_load((HERE / "configs" / "bursty.yaml").read_text()), change)
    cfg["source"]["path"] = str(log)
    cfg["output"]["path"] = str(out_dir / name)
    cfg_path = out_dir / f"{name}.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    cmd = [REPLAY, *(command or ["run"]), "--config", str(cfg_path)]
    r = run_measured(cmd, timeout=timeout)
    last = [x for x in (r["stdout"] + r["stderr"]).splitlines() if x.startswith(("replay:", "tune:"))][-1:]
    rows = json.loads((log / "_bench.json").read_text())["rows"]
    return {"case": name, "rows": rows, "rc": r["rc"], "total_s": r["total_s"], "cpu_s": r.get("cpu_s"),
            "driver_peak_mb": r.get("driver_peak_mb"), "jvm_peak_mb": r.get("jvm_peak_mb"),
            "last_line": last[0] if last else "", "stderr_tail": r["stderr"][-600:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--data-dir", default=str(HERE / "data"))
    ap.add_argument("--out-dir", default=str(HERE / "out" / "defaults"))
    ap.add_argument("--results", default=str(HERE / "results" / "defaults.json"))
    ap.add_argument("--timeout", type=float, default=3 * 3600)
    args = ap.parse_args()
    os.environ.pop("REPLAY_LOCAL_DRIVER_MEMORY", None)  # what a new user has: nothing set
    out_dir = Path(args.out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for name in [c.strip() for c in args.cases.split(",") if c.strip()]:
        print(f"defaults: {name} ...", file=sys.stderr, flush=True)
        r = run_case(name, Path(args.data_dir).resolve(), out_dir, args.timeout)
        results.append(r)
        print(f"defaults: {name}: exit {r['rc']}, {r['total_s']} s, {r['last_line']}", file=sys.stderr, flush=True)
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results).write_text(json.dumps(results, indent=1))
    print("| case | rows | exit | whole process | driver peak RSS | JVM peak RSS | what it printed last |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        print(f"| {r['case']} | {r['rows']:,} | {r['rc']} | {r['total_s']} s | {r['driver_peak_mb']} MB | "
              f"{r['jvm_peak_mb']} MB | {r['last_line'][:160]} |")
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
