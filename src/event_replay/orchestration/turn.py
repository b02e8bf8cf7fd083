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

A task killed or reset by Airflow can leave its spark-submit running, holding the job's lock after its turn was
broken: before each chunk the holder of the turn also waits while a live process of this host holds the job's
lock (`wait_for_job_lock`), instead of submitting a job that would be refused.
"""
from __future__ import annotations

import hashlib
import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from ..io.fs import LocalFs, is_local, local_path
from ..io.lock import (describe, held_here, holder_record, lock_path, read_holder, release, take,
                       utc_now)

POLL_S = 5.0  # a chunk takes tens of seconds at least: a few seconds' delay after the release costs little
TURN_PREFIX = "_turn-"


def turn_path(runs_folder: str | Path, output: str) -> Path:
    """The turn's lock file of `output` (its runs folder may be shared by several outputs: the name carries which)."""
    digest = hashlib.sha256(output.rstrip("/").encode()).hexdigest()[:16]
    return Path(runs_folder) / f"{TURN_PREFIX}{digest}"


def waiting_note(output: str, holder: dict[str, Any] | None, raw: str | None, path: str | Path) -> dict[str, Any]:
    """What the run record says while the run waits: which run it waits for (None: not a DAG run's, e.g. a Spark
    driver holding the job's lock), which process, and which file it holds."""
    holder = holder or {}
    return {"for": holder.get("run_id"), "dag_id": holder.get("dag_id"), "output": output.rstrip("/"),
            "holder": describe(holder or None, raw), "since": utc_now(), "lock_file": str(path)}


def _wait(output: str, path: str | Path, attempt: Callable[[], tuple[bool, str | None, dict | None]],
          on_wait: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """Call `attempt` every POLL_S until it succeeds (it returns (done, the holder's text, the holder)); `on_wait`
    when the wait starts and whenever the holder changes. Returns the waits: {"for", "dag_id", "seconds"}."""
    waits: list[dict[str, Any]] = []
    current: str | None = None  # the holder's lock text we wait for now
    t0 = time.monotonic()
    while True:
        done, raw, holder = attempt()
        if done:
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
    return waits


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
    waits = _wait(output, path, lambda: take(fs, str(path), text), on_wait)
    try:
        yield waits
    finally:
        release(fs, str(path), text)


def wait_for_job_lock(output: str, on_wait: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """Before a chunk's job, with the turn held: wait while a live process of this host holds the job's own lock
    (`<output>/_lock`): a Spark driver that outlived an earlier try of this run (Airflow killed or reset the task,
    its spark-submit went on), or a `replay run` from the CLI. The job would be refused by it. A stale lock is the
    job's to break; a holder on another host, or a remote output, is not waited for (the job's refusal says it)."""
    if not is_local(output):
        return []
    fs, path = LocalFs(), lock_path(local_path(output))

    def free() -> tuple[bool, str | None, dict | None]:
        raw, holder = read_holder(fs, path)
        return raw is None or not held_here(holder), raw, holder

    return _wait(output, path, free, on_wait)
