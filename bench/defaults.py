"""Real-shaped logs on default settings: does `replay run` complete with no memory setting at all? (issue 34)

    python bench/defaults.py [--cases bursty-3m,bursty-3m-sessions,...] [--data-dir bench/data]

Each case is the `replay` command a new user runs, in a fresh process, with no `--conf` and no
REPLAY_LOCAL_DRIVER_MEMORY: what it completes in, the exit code, the summary line's heap figures, the peak RSS
of the Python driver and of the JVM. Logs are bench/bursty.py's shape (variants below), bench/generate.py's headline
log at 100M, and 31 days of the bursty shape in dt= folders (bench/bursty_days.py) replayed by one `replay run
--partitions` (its outputs checked complete: `range_check`), each generated once.
Results: bench/results/defaults.json and a markdown table on stdout. No timing is asserted anywhere.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bursty import BurstyProfile, chunks  # noqa: E402
from bursty_days import DAY_MS, day_of, days_profile, write_days  # noqa: E402
from generate import Profile, write_chunks  # noqa: E402
from run import ensure_log, label, run_measured  # noqa: E402

REPLAY = str(Path(sys.executable).parent / "replay")


@dataclass(frozen=True)
class Case:
    profile: BurstyProfile | Profile
    change: dict = field(default_factory=dict)  # changes to the config (None removes a key)
    command: list | None = None  # `replay` arguments other than `run`
    config: str = "bursty.yaml"
    days: int = 0  # > 0: the log in dt= folders over that many days, replayed by `run --partitions`


RANGE_DAYS = 31
CASES = {
    "bursty-3m": Case(BurstyProfile(rows=3_000_000)),
    "bursty-3m-sessions": Case(BurstyProfile(rows=3_000_000), {"window": {"type": "session", "gap": "2s",
                                                                          "size": None}}),
    "bursty-3m-tune-4": Case(BurstyProfile(rows=3_000_000), command=[
        "tune", "--max-out-of-orderness", "500ms,2s", "--idle-timeout", "none,1500ms"]),
    "bursty-3m-hot-key-30pct": Case(BurstyProfile(rows=3_000_000, hot_key_share=0.3)),
    # 32 splits, a row every 4 s each outside pauses: 7 days, every gap near or past the idle timeout.
    "sparse-32-splits-7-days": Case(BurstyProfile(rows=4_850_000, splits=32, gap_ms=4_000.0),
                                    {"source": {"splits": [f"p{i:02d}" for i in range(33)]}}),
    "bursty-30m": Case(BurstyProfile(rows=30_000_000)),
    # bench/run.py's headline log (bench/generate.py), its config: the log every headline figure is measured on.
    "headline-100m": Case(Profile(rows=100_000_000), config="headline.yaml"),
    # 31 days of the bursty shape (~83M rows) in dt= folders, one `replay run --partitions` of the whole month.
    "bursty-31-days-partitions": Case(days_profile(RANGE_DAYS), days=RANGE_DAYS),
}


def ensure(name: str, case: Case, data_dir: Path) -> Path:
    p = case.profile
    if isinstance(p, Profile):  # shared with bench/run.py (bench/data/log-100m)
        return ensure_log(p.rows, SimpleNamespace(shape="headline", seed=p.seed, data_dir=data_dir))
    stem = name if case.days else name.split('-tune')[0].split('-sessions')[0]
    path = data_dir / f"defaults-{stem}-{label(p.rows)}"
    meta = {"shape": "bursty", "profile": p.__dict__}
    manifest = path / "_bench.json"
    if not (manifest.exists() and json.loads(manifest.read_text()).get("profile") == meta["profile"]):
        print(f"defaults: generating {p.rows} rows -> {path}", file=sys.stderr, flush=True)
        if case.days:
            write_days(path, p, quiet=True)
        else:
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
    case = CASES[name]
    log = ensure(name, case, data_dir)
    cfg = merged(yaml.safe_load((HERE / "configs" / case.config).read_text()), case.change)
    cfg["source"]["path"] = str(log)
    cfg["output"]["path"] = str(out_dir / name)
    cfg_path = out_dir / f"{name}.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    cmd = [REPLAY, *(case.command or ["run"]), "--config", str(cfg_path)]
    if case.days:
        first = case.profile.start_ms
        cmd += ["--partitions", f"{day_of(first)}..{day_of(first + (case.days - 1) * DAY_MS)}", "--first"]
    print(f"defaults: {' '.join(cmd)}", file=sys.stderr, flush=True)
    r = run_measured(cmd, timeout=timeout)
    lines = [x for x in (r["stdout"] + r["stderr"]).splitlines() if x.startswith(("replay:", "tune:"))]
    rows = json.loads((log / "_bench.json").read_text())["rows"]
    out = {"case": name, "rows": rows, "rc": r["rc"], "total_s": r["total_s"], "cpu_s": r.get("cpu_s"),
           "driver_peak_mb": r.get("driver_peak_mb"), "jvm_peak_mb": r.get("jvm_peak_mb"),
           "last_line": lines[-1] if lines else "", "replay_lines": lines, "stderr_tail": r["stderr"][-3000:]}
    if case.days and r["rc"] == 0:
        out["range_check"] = range_check(out_dir / name, log, rows)
    return out


def range_check(output: Path, log: Path, rows: int) -> dict:
    """Is a range's output complete? Every source dt= folder committed in every dataset, and every row read
    accounted for: per partition rows read = in windows + late + quarantined + skipped (counts/), their sum the
    log's rows, and the late_events and quarantine datasets holding as many rows as counts/ says."""
    import pyarrow.dataset as ds

    from event_replay.io.output import COUNTS_COLUMNS
    days = sorted(p.name for p in log.glob("dt=*"))
    datasets = ("windows", "late_events", "watermarks", "quarantine", "counts")
    missing = {d: sorted(set(days) - {p.name for p in (output / d).glob("dt=*")}) for d in datasets}
    counts = ds.dataset(output / "counts", format="parquet", partitioning="hive").to_table().to_pylist()
    total = {c: sum(r[c] for r in counts) for c in COUNTS_COLUMNS}
    unbalanced = [r for r in counts if r["rows_read"] != r["rows_in_windows"] + r["late_rows"]
                  + r["quarantined_rows"] + r["skipped_rows"]]
    written = {d: ds.dataset(output / d, format="parquet", partitioning="hive").count_rows()
               for d in ("late_events", "quarantine")}
    ok = (not any(missing.values()) and not unbalanced and len(counts) == len(days) and total["rows_read"] == rows
          and written["late_events"] == total["late_rows"] and written["quarantine"] == total["quarantined_rows"]
          and not (output / "_range.json").exists())
    return {"ok": ok, "partitions": len(days), "counts_rows": len(counts), "missing": missing,
            "unbalanced": unbalanced, "totals": total, "written": written, "log_rows": rows}


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
    print("| case | rows | exit | whole process | CPU | driver peak RSS | JVM peak RSS | what it printed last |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        print(f"| {r['case']} | {r['rows']:,} | {r['rc']} | {r['total_s']} s | {r['cpu_s']} s | {r['driver_peak_mb']} MB | "
              f"{r['jvm_peak_mb']} MB | {r['last_line'][:160]} |")
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
