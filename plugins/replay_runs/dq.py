"""A run's data-quality state as the runs page shows it: pass, fail or not run, and the line behind it.

An Airflow run's: its report's `dq` line (the report task), else the data-quality job's `data_quality.json` (a run
whose check failed has no report: the report task never ran), else the outcome of the Data Docs GX built in its
`_data_docs/`, else "not run". A CLI run's: its Data Docs (`replay validate`).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from event_replay.layout import DATA_QUALITY_FILE, DOCS_FOLDER

from .progress import read_json


def run_dq(report: dict[str, Any], run: Path) -> tuple[str, str]:
    """An Airflow run folder's state (module doc)."""
    docs = run / DOCS_FOLDER
    return (_dq_from_record(report.get("dq")) or _dq_from_result(read_json(run / DATA_QUALITY_FILE))
            or (docs_outcome(docs) if (docs / "index.html").is_file() else ("not run", "")))


_DOCS_FAILED = re.compile(r"\bFailed\b|\bfailed\b")


def docs_outcome(docs: Path) -> tuple[str, str]:
    """pass/fail from the validation result pages GX wrote into the Data Docs site."""
    pages = sorted((docs / "validations").rglob("*.html")) if (docs / "validations").is_dir() else []
    if not pages:
        return ("not run", "") if not (docs / "index.html").is_file() else ("fail", "Data Docs without results")
    failed = [p for p in pages if _page_failed(p)]
    if failed:
        return "fail", f"{len(failed)}/{len(pages)} validation results failed (Data Docs)"
    return "pass", f"{len(pages)} validation results passed (Data Docs)"


def _page_failed(page: Path) -> bool:
    text = page.read_text(errors="replace")
    # GX's validation page states the overall status in its overview ("Status: Succeeded"/"Failed").
    m = re.search(r"Status.{0,400}?(Succeeded|Failed)", text, re.S)
    return (m.group(1) == "Failed") if m else bool(_DOCS_FAILED.search(text))


def _dq_from_result(result: dict[str, Any]) -> tuple[str, str] | None:
    """pass/fail from the data-quality job's `data_quality.json` (a run whose check failed has no report.json)."""
    if not isinstance(result.get("success"), bool):
        return None
    n, failed = result.get("expectations"), result.get("failed") or 0
    if result["success"]:
        return "pass", f"passed ({n} expectations)"
    return "fail", f"FAILED {failed}/{n}: {', '.join(result.get('failed_names') or [])}"


def _dq_from_record(dq: Any) -> tuple[str, str] | None:
    if dq is None:
        return None
    s = str(dq)
    if s.startswith("passed"):
        return "pass", s
    if s.startswith("FAILED"):
        return "fail", s
    return "not run", s  # "skipped (...)"
