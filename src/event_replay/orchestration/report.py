"""What a run left under the output path, per partition: row counts from Parquet footers (no data is read), written
into the run folder as report.json, report.md and report.html (report_page.py), with the run's other reports: data
quality, Data Docs, the why-report and, when the run was compared with the live job, the agreement (its compare/).

The columns are named for what their rows are: a row of `windows/` is one firing (a window fired again by a late row
has a row per firing), so that column is "firings", as on every other page. Beside them, each partition's row of
`counts/` (a few numbers, read with pyarrow): rows read = in windows + late + quarantined + skipped + filtered, the
accounting the GX suite checks (docs/semantics.md, "Row filter").
"""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any, Sequence

import pyarrow.parquet as pq

from ..compare.summary import pct, read_summary
from ..history.partitions import has_state
from ..io.output import COUNTS_COLUMNS
from ..io.partition_folders import folder_of
from ..layout import CHUNK_FILE, COMPARE_FOLDER, COMPARE_JOBS_FILE, COUNTS, DATASETS, \
    PLAN_FILE, REPORT_FILE, REPORT_HTML_FILE, REPORT_MD_FILE, state_dir
from .steps import steps_text

# What a row of each output dataset is (the report's column headings).
COLUMN_NAMES = {"windows": "firings", "late_events": "late rows", "watermarks": "watermark rows",
                "quarantine": "quarantined rows", "counts": "count rows"}
COMPARE_PAGE = f"{COMPARE_FOLDER}/index.html"
# counts/'s columns as the report's headings: every row read is in exactly one of the five after it.
COUNT_NAMES = {"rows_read": "rows read", "rows_in_windows": "in windows", "late_rows": "late",
               "quarantined_rows": "quarantined", "skipped_rows": "skipped", "filtered_rows": "filtered"}


def dataset_rows(folder: Path) -> int | None:
    """Rows of a Parquet dataset folder (None if absent), summed from the file footers."""
    if not folder.is_dir():
        return None

    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(folder.rglob("*.parquet"))
               if not any(part.startswith(("_", ".")) for part in f.relative_to(folder).parts))


def partition_counts(output_path: str | Path, partition: str) -> dict[str, int] | None:
    """The partition's row of `counts/` (None if it has none); a counts/ written before the row filter existed has
    no filtered_rows: none was filtered."""
    folder = Path(output_path) / COUNTS / folder_of(partition)
    files = sorted(f for f in folder.rglob("*.parquet") if not f.name.startswith(("_", "."))) \
        if folder.is_dir() else []
    if not files:
        return None
    tables = [pq.read_table(f) for f in files]
    return {c: sum(int(v or 0) for t in tables if c in t.column_names for v in t.column(c).to_pylist())
            for c in COUNTS_COLUMNS}


def partition_report(output_path: str | Path, partition: str) -> dict[str, Any]:
    out = Path(output_path)
    rows = {ds: dataset_rows(out / ds / folder_of(partition)) for ds in DATASETS}  # days and hours
    return {"partition": partition, "rows": rows, "missing_outputs": [ds for ds, n in rows.items() if n is None],
            "counts": partition_counts(out, partition),
            "state": state_dir(str(out), partition) if has_state(None, str(out), partition) else None}


def build_report(output_path: str, partitions: Sequence[str], **run_info: Any) -> dict[str, Any]:
    parts = [partition_report(output_path, p) for p in partitions]
    totals = {ds: sum(p["rows"][ds] or 0 for p in parts) for ds in DATASETS}
    counts = {c: sum((p["counts"] or {}).get(c, 0) for p in parts) for c in COUNTS_COLUMNS}
    return {**run_info, "output_path": output_path, "partitions": parts, "totals": totals, "counts": counts,
            "complete": all(not p["missing_outputs"] for p in parts)}


def accounting_text(counts: dict[str, int]) -> str:
    """`rows read 1,010 = 900 in windows + 7 late + 2 quarantined + 1 skipped + 100 filtered`."""
    parts = " + ".join(f"{counts.get(c, 0):,} {COUNT_NAMES[c]}" for c in COUNTS_COLUMNS[1:])
    return f"rows read {counts.get('rows_read', 0):,} = {parts}"


def live_agreement(folder: str | Path) -> dict[str, Any] | None:
    """The comparison with the live job in the run folder (`compare/summary.json`, the compare_live task), as the
    report keeps it; None when the run was not compared."""
    summary = read_summary(Path(folder) / COMPARE_FOLDER)
    if summary is None:
        return None
    try:
        t = summary["totals"]
        return {"agreement_pct": float(t["agreement_pct"]), "windows": int(t["windows"]),
                "differing": int(t["differing"]), "min_agreement_pct": summary.get("min_agreement_pct"),
                "page": COMPARE_PAGE}
    except (ValueError, KeyError, TypeError):
        return None


def _compare_jobs(folder: str | Path) -> dict[str, int]:
    """The Spark jobs of the run's comparison (`compare/spark_jobs.json`), {} when not compared."""
    try:
        found = json.loads((Path(folder) / COMPARE_FOLDER / COMPARE_JOBS_FILE).read_text())
        return {k: int(v) for k, v in found.items()}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def live_text(live: dict[str, Any]) -> str:
    """`99.60% agreement: 1 of 253 windows differ (threshold 99%)`."""
    n, bad = live["windows"], live["differing"]
    detail = f"{bad:,} of {n:,} windows differ" if bad else f"all {n:,} windows agree"
    limit = f" (threshold {live['min_agreement_pct']:g}%)" if isinstance(live.get("min_agreement_pct"), (int, float)) \
        else ""
    return f"{pct(live['agreement_pct'])} agreement: {detail}{limit}"


def facts(report: dict[str, Any], folder: str | Path) -> list[tuple[str, str, str | None]]:
    """(label, text, link relative to the run folder or None) of the report's header, for report.md and report.html."""
    found: list[tuple[str, str, str | None]] = [("config", str(report.get("config_file", "")), None),
                                                ("outputs", str(report["output_path"]), None)]
    if report.get("counts"):  # a report written before it kept counts/ has none
        found.append(("rows", accounting_text(report["counts"]), None))
    if report.get("missing_days"):
        found.append(("days without a partition (replayed as empty)", ", ".join(report["missing_days"]), None))
    if report.get("steps"):  # every task of the run that had ended when the report ran (steps.py)
        found.append(("steps", steps_text(report["steps"]), None))
    if report.get("calibration"):
        found.append(("calibration", str(report["calibration"]), None))
    if report.get("dq") is not None:
        found.append(("data quality", str(report["dq"]), None))
    for key, label in (("data_docs", "Data Docs"), ("why_report", "why-report")):
        if report.get(key):
            found.append((label, str(report[key]), _relative(report[key], folder)))
    if report.get("live"):
        found.append(("vs live", live_text(report["live"]), report["live"]["page"]))
    if report.get("spark_jobs"):  # what each report cost, in Spark jobs (quality_job.py)
        found.append(("Spark jobs of the reports", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in
                                                             sorted(report["spark_jobs"].items())), None))
    return found


def _relative(path: str, folder: str | Path) -> str | None:
    """A report's path relative to the run folder (a link that works from disk and on the runs page), None outside."""
    rel = os.path.relpath(Path(path).resolve(), Path(folder).resolve())
    return None if rel.startswith("..") else Path(rel).as_posix()


def render_markdown(report: dict[str, Any], folder: str | Path = ".") -> str:
    lines = [f"# Replay report: {report.get('dag_id', '')} {report.get('run_id', '')}".rstrip(), ""]
    for label, text, link in facts(report, folder):
        lines.append(f"- {label}: [{text}]({link})" if link else f"- {label}: `{text}`" if label in (
            "config", "outputs") else f"- {label}: {text}")
    heads = [COLUMN_NAMES.get(ds, ds) for ds in DATASETS]
    lines += ["", "| partition | " + " | ".join(heads) + " | carried state |", "|---" * (len(DATASETS) + 2) + "|"]
    for p in report["partitions"]:
        cells = ["missing" if p["rows"][ds] is None else str(p["rows"][ds]) for ds in DATASETS]
        lines.append(f"| {p['partition']} | " + " | ".join(cells) + f" | {'yes' if p['state'] else 'no'} |")
    lines.append("| total | " + " | ".join(str(report["totals"][ds]) for ds in DATASETS) + " | |")
    lines += ["", "Rows of each output dataset, from the Parquet footers: " + ", ".join(
        f"{COLUMN_NAMES.get(ds, ds)} = `{ds}/`" for ds in DATASETS) + " (a window fired again by a late row has a "
              "row per firing). The HTML version of this report: " + REPORT_HTML_FILE + "."]
    if report.get("counts"):
        lines += ["", "| partition | " + " | ".join(COUNT_NAMES.values()) + " |", "|---" * (len(COUNT_NAMES) + 1) + "|"]
        for p in report["partitions"]:
            cells = [str(p["counts"][c]) if p.get("counts") else "missing" for c in COUNTS_COLUMNS]
            lines.append(f"| {p['partition']} | " + " | ".join(cells) + " |")
        lines.append("| total | " + " | ".join(str(report["counts"][c]) for c in COUNTS_COLUMNS) + " |")
        lines += ["", ROWS_NOTE]
    return "\n".join(lines) + "\n"


ROWS_NOTE = ("Every row read counted once, from `counts/`: rows read = in windows + late + quarantined + skipped + "
             "filtered (rows a `filter` kept out of the windows; they still moved the watermarks). A `having` drops "
             "firings, not rows: the rows of a dropped firing are still in windows.")


def write_report(report: dict[str, Any], folder: str | Path) -> tuple[str, str]:
    """report.json, report.md and report.html in the run folder, with its comparison with the live job if any."""
    from .report_page import render_html  # lazy: report_page.py reads this module's facts (a cycle at import)

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    jobs = {**(report.get("spark_jobs") or {}), **_compare_jobs(folder)}
    report = {**report, "live": live_agreement(folder), "spark_jobs": jobs or None}
    (folder / REPORT_FILE).write_text(json.dumps(report, indent=2, default=str) + "\n")
    (folder / REPORT_MD_FILE).write_text(render_markdown(report, folder))
    (folder / REPORT_HTML_FILE).write_text(render_html(report, folder))
    return str(folder / REPORT_FILE), str(folder / REPORT_MD_FILE)


def failure_line(report: dict[str, Any], md_path: str) -> str | None:
    """Why the report task fails, in one line, with the steps before it that passed; None when it does not."""
    incomplete = [x["partition"] for x in report["partitions"] if x["missing_outputs"]]
    if not incomplete:
        return None
    passed = [f"the replay passed ({len(report['partitions'])} partitions)"]
    if report.get("dq") is not None:
        passed.append(f"data quality {report['dq']}")
    live = live_agreement(Path(md_path).parent)
    if live:
        passed.append(f"vs live {live_text(live)}")
    return (f"partitions without complete outputs: {', '.join(incomplete)} (see {md_path}); before the report: "
            + "; ".join(passed))


def partition_rows_read(output_path: str | Path, partition: str) -> int:
    """The rows one replayed partition read: its row of the `counts/` dataset."""
    return (partition_counts(output_path, partition) or {}).get("rows_read", 0)


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
