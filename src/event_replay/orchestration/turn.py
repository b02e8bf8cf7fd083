"""A DAG run's turn at an output: one run at a time replays into an output, holding it from its first chunk to its last.

The job's own lock (io/lock.py, `<output>/_lock`) is held per Spark job, so runs that met at an output used to take
turns chunk by chunk: each chunk of the other runs was refused, failed its task and came back as an Airflow retry
(a spark-submit and a JVM start each). The replay task now takes the output's turn before its first chunk and keeps
it until its last: the lock file `<runs folder>/_turn-<digest of the output path>` (the runs folder is the parent of
the run folders: `<output>/_airflow/` for a local output). A run that finds the turn taken waits for it, looking
again every few seconds, and says which run it waits for each time the holder changes (`on_wait`: the task log and
the run record). Whoever looks first after the release takes the turn (no queue order).

The holder is the task's process (io/lock.py `holder_record`, with the DAG run's id): the turn of a task that was
killed (same host, its pid gone) is broken at once; one held on another host is never broken automatically (its
processes cannot be seen from here): the wait names the file to delete once that run is known dead. `replay run`
from the CLI takes no turn and still meets a DAG run at the job's lock, where it is refused as before.
"""
from __future__ import annotations

import hashlib
import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from ..io.fs import LocalFs
from ..io.lock import describe, holder_record, release, take, utc_now

POLL_S = 5.0  # a chunk takes tens of seconds at least: a few seconds' delay after the release costs little
TURN_PREFIX = "_turn-"


def turn_path(runs_folder: str | Path, output: str) -> Path:
    """The turn's lock file of `output` (its runs folder may be shared by several outputs: the name carries which)."""
    digest = hashlib.sha256(output.rstrip("/").encode()).hexdigest()[:16]
    return Path(runs_folder) / f"{TURN_PREFIX}{digest}"


def waiting_note(output: str, holder: dict[str, Any] | None, raw: str | None, path: Path) -> dict[str, Any]:
    """What the run record says while the run waits: which run it waits for, and which file holds the turn."""
    holder = holder or {}
    return {"for": holder.get("run_id"), "dag_id": holder.get("dag_id"), "output": output.rstrip("/"),
            "holder": describe(holder or None, raw), "since": utc_now(), "turn_file": str(path)}


@contextmanager
def output_turn(runs_folder: str | Path, output: str, run_id: str | None, dag_id: str | None,
                on_wait: Callable[[dict[str, Any]], None]) -> Iterator[list[dict[str, Any]]]:
    """Hold `output`'s turn for the block, waiting for it first if another run holds it. `on_wait(note)` is called
    when the wait starts and whenever the holder changes (note: `waiting_note`). Yields the waits, one per holder
    waited for: {"for": run id, "dag_id", "seconds"}."""
    path = turn_path(runs_folder, output)
    path.parent.mkdir(parents=True, exist_ok=True)
    fs = LocalFs()
    text = json.dumps(holder_record(None, run_id=run_id, dag_id=dag_id, output=output.rstrip("/")), sort_keys=True)
    waits: list[dict[str, Any]] = []
    current: str | None = None  # the holder's lock text we wait for now
    t0 = time.monotonic()
    while True:
        taken, raw, holder = take(fs, str(path), text)
        if taken:
            break
        if raw != current:
            if waits:
                waits[-1]["seconds"] = round(time.monotonic() - t0, 1)
            note = waiting_note(output, holder, raw, path)
            waits.append({"for": note["for"], "dag_id": note["dag_id"], "seconds": 0.0})
            current, t0 = raw, time.monotonic()
            on_wait(note)
        time.sleep(POLL_S)
    if waits:
        waits[-1]["seconds"] = round(time.monotonic() - t0, 1)
    try:
        yield waits
    finally:
        release(fs, str(path), text)
