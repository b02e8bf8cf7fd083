"""Already committed: a backfill whose every partition an identical earlier run committed is not replayed again.

A partition P of the planned run is already committed by run X when
- X's run folder (a sibling of this run's, in the same runs folder) has P's done marker: X's job committed P;
- X's record (record.py) has the same output, the same config fingerprint, the same input listing of P (files,
  sizes, modification times), and the same place for P in its plan (predecessor, first, end of input, missing):
  the same replay of the same rows, continuing the same history, so the same outputs;
- X is P's last commit: X's done marker is the latest of P's among the runs, and P's row of the `counts` dataset
  (written by every commit of P, a `replay run` from the CLI too; a range keeps no carried state for the partitions
  inside it) is not newer than that marker.
When every planned partition is already committed the run is skipped; otherwise the chunks (Spark jobs) from the
plan's start whose every partition is already committed are skipped (`chunk_committed`): an identical run killed
after its first chunks left them as this run would write them, carried state included, so this run goes on from
there. A chunk after one this run replays is replayed: it continues the replayed chunk's state, which may differ. A run record without these fields (older runs), a source that is not listed or an output that is
not local never match: the run replays. The form's `force` replays anyway.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..io.fs import is_local, local_path
from ..history.partitions import Partition
from ..layout import COUNTS, DONE_FOLDER, RECORD_FILE
from .plan import PlannedRuns


def config_fingerprint(resolved: Any) -> str | None:
    """The run record's config fingerprint: a hash of the whole effective config (paths included: another source
    or output is other work)."""
    if resolved is None:
        return None
    return hashlib.sha256(json.dumps(resolved, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _read(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _places(record: Mapping[str, Any]) -> dict[str, dict]:
    return {r["partition"]: r for r in (record.get("request") or {}).get("runs") or [] if isinstance(r, dict)}


def _listing(record: Mapping[str, Any], partition: str) -> Any:
    found = record.get("input") or {}
    return (found.get("partitions") or {}).get(partition) if found.get("listed") else None


def _same(mine: Mapping[str, Any], theirs: Mapping[str, Any], partition: str) -> bool:
    fp = (mine.get("config") or {}).get("fingerprint")
    return (fp is not None and fp == (theirs.get("config") or {}).get("fingerprint")
            and (mine.get("request") or {}).get("output") == (theirs.get("request") or {}).get("output")
            and _listing(mine, partition) is not None and _listing(mine, partition) == _listing(theirs, partition)
            and _places(mine).get(partition) == _places(theirs).get(partition))


def _last_commit(runs_folder: Path, partition: str) -> tuple[Path, float] | None:
    """The run folder with P's latest done marker, and that marker's time."""
    markers = [(m.parent.parent, m.stat().st_mtime) for m in runs_folder.glob(f"*/{DONE_FOLDER}/{partition}")]
    return max(markers, key=lambda found: found[1]) if markers else None


def _commit_time(output: str, partition: str) -> float | None:
    """When P's outputs were written: its `counts` files' latest modification (None: P is not committed)."""
    folder = Path(local_path(output)) / COUNTS / Partition.parse(partition).subpath
    times = [f.stat().st_mtime for f in folder.rglob("*") if f.is_file()] if folder.is_dir() else []
    return max(times) if times else None


def committed_by(runs_folder: str | Path, record: Mapping[str, Any], partitions: Sequence[str]) -> dict[str, str]:
    """{partition: run id} for every partition of `partitions` already committed by an identical run (module doc);
    `record` is this run's record (new_record), whose folder is not one of the candidates."""
    output = (record.get("request") or {}).get("output")
    if not output or not is_local(output):
        return {}
    runs_folder, found = Path(runs_folder), {}
    for partition in partitions:
        last = _last_commit(runs_folder, partition)
        written = _commit_time(output, partition)
        if last is None or written is None or written > last[1]:
            continue
        theirs = _read(last[0] / RECORD_FILE)
        if theirs is not None and theirs.get("run_id") != record.get("run_id") and _same(record, theirs, partition):
            found[partition] = theirs.get("run_id") or last[0].name
    return found


def chunk_committed(runs_folder: str | Path, record: Mapping[str, Any], partitions: Sequence[str]) -> dict[str, list[str]]:
    """{run id: its partitions} when identical runs committed every one of `partitions` (module doc), else {}."""
    found = committed_by(runs_folder, record, partitions)
    if not partitions or len(found) != len(partitions):
        return {}
    by_run: dict[str, list[str]] = {}
    for partition in partitions:
        by_run.setdefault(found[partition], []).append(partition)
    return by_run


def all_committed(runs_folder: str | Path, record: Mapping[str, Any], plan: PlannedRuns) -> dict[str, list[str]]:
    """{run id: its partitions} when an identical run committed every planned partition (module doc), else {}."""
    return chunk_committed(runs_folder, record, plan.partitions) if plan.runs else {}


def committed_lines(by_run: Mapping[str, list[str]]) -> list[str]:
    """One line a run: `2024-01-01..2024-01-04 (4 partitions) already committed by run X (same config, same
    input)`."""
    return [f"{ps[0]}..{ps[-1]} ({len(ps)} partition{'s' if len(ps) != 1 else ''}) already committed by run {run} "
            "(same config, same input)" for run, ps in by_run.items()]
