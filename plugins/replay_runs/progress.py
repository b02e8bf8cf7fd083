"""The progress of a backfill DAG run, read from its run folder only (no Spark, no data): the partitions it plans,
those it has replayed and committed, and the one its replay job is on.

The names are layout.py's; the writers are event_replay.orchestration.report (plan.json, replaying.json),
operators.py (the done/<partition> markers) and range_replay.py (the range job's `<output>/_range.json`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from event_replay.layout import CHUNK_FILE, DONE_FOLDER, PLAN_FILE, RANGE_PROGRESS_FILE


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from a file, {} when it is missing, unreadable or not an object (a run folder being written)."""
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Progress:
    planned: list[str]
    done: list[str]
    current: str | None  # the first planned partition not done while a chunk job is on (or was, if it failed)


def progress(out: Path, run: Path, report: dict[str, Any] | None = None) -> Progress:
    """Partitions done / planned of an Airflow run folder and the one its replay is on, from its records:
    - planned: `plan.json` (the plan task), else the report's partitions;
    - done: the `done/` markers, every planned one once the report says the run is complete, and, while a chunk
      job runs (`replaying.json`), the partitions of the chunk up to the one the job's `<output>/_range.json` says
      it committed (only a `_range.json` of that very chunk, written since the chunk started);
    - current: the first planned partition not done, when a chunk job is on (or stopped there)."""
    report = report if report is not None else read_json(run / "report.json")
    planned = [str(p) for p in read_json(run / PLAN_FILE).get("partitions") or []] or \
        [p["partition"] for p in report.get("partitions", [])]
    marked = {p.name for p in (run / DONE_FOLDER).glob("[!.]*")} if (run / DONE_FOLDER).is_dir() else set()
    if not planned:  # a run folder from before plan.json: what it replayed, with no plan to count against
        return Progress(planned=[], done=sorted(marked), current=None)
    done = set(marked) if not report.get("complete") else set(planned)
    chunk = read_json(run / CHUNK_FILE)
    if chunk and not report.get("complete"):
        rng = read_json(out / RANGE_PROGRESS_FILE)
        request, committed = rng.get("request") or {}, rng.get("committed")
        if (committed and request.get("first_id") == chunk.get("first") and request.get("last_id") == chunk.get("last")
                and _newer_or_same(out / RANGE_PROGRESS_FILE, run / CHUNK_FILE)):
            done |= {p for p in chunk.get("partitions") or [] if p <= committed}
    todo = [p for p in planned if p not in done]
    current = todo[0] if chunk and todo and not report.get("complete") else None
    return Progress(planned=planned, done=[p for p in planned if p in done], current=current)


def _newer_or_same(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_mtime >= b.stat().st_mtime - 1  # 1 s: filesystems with coarse timestamps
    except OSError:
        return False
