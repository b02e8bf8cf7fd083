"""What a run left under the output path, per partition: row counts from Parquet footers (no data is read)."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Sequence

import pyarrow.parquet as pq

from ..history.state_files import has_state
from ..layout import CHUNK_FILE, COUNTS, DATASETS, PLAN_FILE, REPORT_FILE, REPORT_MD_FILE, state_dir


def dataset_rows(folder: Path) -> int | None:
    """Rows of a Parquet dataset folder (None if absent), summed from the file footers."""
    if not folder.is_dir():
        return None

    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(folder.rglob("*.parquet"))
               if not any(part.startswith(("_", ".")) for part in f.relative_to(folder).parts))


def partition_report(output_path: str | Path, partition: str) -> dict[str, Any]:
    out = Path(output_path)
    rows = {ds: dataset_rows(out / ds / f"dt={partition}") for ds in DATASETS}
    return {"partition": partition, "rows": rows, "missing_outputs": [ds for ds, n in rows.items() if n is None],
            "state": state_dir(str(out), partition) if has_state(None, str(out), partition) else None}


def build_report(output_path: str, partitions: Sequence[str], **run_info: Any) -> dict[str, Any]:
    parts = [partition_report(output_path, p) for p in partitions]
    totals = {ds: sum(p["rows"][ds] or 0 for p in parts) for ds in DATASETS}
    return {**run_info, "output_path": output_path, "partitions": parts, "totals": totals,
            "complete": all(not p["missing_outputs"] for p in parts)}


def render_markdown(report: dict[str, Any]) -> str:
    lines = [f"# Replay report: {report.get('dag_id', '')} {report.get('run_id', '')}".rstrip(), "",
             f"- config: `{report.get('config_file', '')}`", f"- outputs: `{report['output_path']}`"]
    if report.get("missing_days"):
        lines.append(f"- days without a partition (replayed as empty): {', '.join(report['missing_days'])}")
    if report.get("dq") is not None:
        lines.append(f"- data quality: {report['dq']}")
    for key, label in (("data_docs", "Data Docs"), ("why_report", "why-report")):
        if report.get(key):
            lines.append(f"- {label}: `{report[key]}`")
    lines += ["", "| partition | " + " | ".join(DATASETS) + " | state |", "|---" * (len(DATASETS) + 2) + "|"]
    for p in report["partitions"]:
        cells = ["missing" if p["rows"][ds] is None else str(p["rows"][ds]) for ds in DATASETS]
        lines.append(f"| {p['partition']} | " + " | ".join(cells) + f" | {'yes' if p['state'] else 'no'} |")
    lines.append("| total | " + " | ".join(str(report["totals"][ds]) for ds in DATASETS) + " | |")
    return "\n".join(lines) + "\n"


def write_report(report: dict[str, Any], folder: str | Path) -> tuple[str, str]:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / REPORT_FILE).write_text(json.dumps(report, indent=2, default=str) + "\n")
    (folder / REPORT_MD_FILE).write_text(render_markdown(report))
    return str(folder / REPORT_FILE), str(folder / REPORT_MD_FILE)


def partition_rows_read(output_path: str | Path, partition: str) -> int:
    """The rows one replayed partition read: its row of the `counts/` dataset."""
    folder = Path(output_path) / COUNTS / f"dt={partition}"
    files = sorted(folder.rglob("*.parquet")) if folder.is_dir() else []
    return sum(int(v or 0) for f in files for v in pq.read_table(f, columns=["rows_read"]).column(0).to_pylist())


# The run's progress on disk, for the "Replay runs" page (plugins/replay_runs/runs.py; the names are layout.py's):
# what the run plans, the chunk being replayed now; the done/<partition> markers (operators.py) say what the run has
# replayed, the range job's `<output>/_range.json` (range_replay.py) which partition of the chunk it has committed.


def write_plan_record(run_dir: str | Path, partitions: Sequence[str], missing: Sequence[str] = (),
                      partitions_per_job: int | None = None, run_data_quality: bool = True) -> Path:
    """`<run folder>/plan.json`: the partitions the run will replay, in order (written by the plan task), and whether
    data quality (with the why-report) runs after them."""
    folder = Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / PLAN_FILE
    tmp = path.with_name(PLAN_FILE + ".tmp")
    tmp.write_text(json.dumps({"partitions": list(partitions), "missing": list(missing),
                               "partitions_per_job": partitions_per_job, "run_data_quality": run_data_quality},
                              indent=1) + "\n")
    tmp.replace(path)  # a reader never sees half a file
    return path


def write_chunk_record(run_dir: str | Path, job: int, jobs: int, partitions: Sequence[str]) -> Path:
    """`<run folder>/replaying.json`: the chunk whose Spark job runs now (job k of n, its partitions)."""
    folder = Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CHUNK_FILE
    tmp = path.with_name(CHUNK_FILE + ".tmp")
    tmp.write_text(json.dumps({"job": job, "jobs": jobs, "first": partitions[0], "last": partitions[-1],
                               "partitions": list(partitions),
                               "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")},
                              indent=1) + "\n")
    tmp.replace(path)
    return path


def clear_chunk_record(run_dir: str | Path) -> None:
    """Every chunk is replayed: nothing is running any more."""
    (Path(run_dir) / CHUNK_FILE).unlink(missing_ok=True)
