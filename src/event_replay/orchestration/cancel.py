"""Cancelling a replay: a SIGTERM stops the job and leaves its output consistent.

Both sides of a cancel live here:
- the job (`replay run`, jobs/replay_job.py): inside `cancellable(output)`, a SIGTERM raises `Terminated` in the
  main thread, so the job unwinds as after any failure (a span not yet committed removes its staging, the output
  lock is released on the way out); on the way out, still under the lock, an interrupted commit is rolled forward
  and any staging left is removed: every committed partition stays, nothing half-written does. A second SIGTERM
  while that happens is ignored. `guarded` (exits.py) turns Terminated, a KeyboardInterrupt, into exit code 130.
- the Airflow task (submit_hook.py on_kill): Airflow SIGTERMs the task's process group when a person marks the run
  (or the task) failed, and calls on_kill; `stop_spark_submit` sends SIGTERM to the job's Python driver (it may not
  have had it: a timeout calls on_kill alone), waits up to GRACE_SECONDS for spark-submit to end, then leaves the
  rest to the hook's own kill. Airflow SIGKILLs the group 5 s after its SIGTERM, so the grace stays below that.
  `write_cancel_record` leaves `cancelled.json` in the run folder for the runs page ("cancelled after partition i
  of n").

Only a local output is cleaned on the way out (on a Hadoop FileSystem the next run does it, under its lock).
"""
from __future__ import annotations

import datetime as dt
import json
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

import psutil

from ..io.commit import recover, remove_orphan_staging
from ..io.fs import LocalFs, is_local, local_path
from ..layout import CANCEL_FILE, RANGE_PROGRESS_FILE

GRACE_SECONDS = 4.0


class Terminated(KeyboardInterrupt):
    """The job was asked to stop (SIGTERM)."""


@contextmanager
def cancellable(output: str, prog: str = "replay") -> Iterator[None]:
    """SIGTERM raises Terminated inside the block (main thread only); after one, the output is made consistent on
    the way out (module doc). Enter it inside the output lock, so that the clean-up runs under it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    asked = []

    def stop(signum, frame):
        if asked:
            return  # cleaning up already
        asked.append(signum)
        print(f"{prog}: SIGTERM: stopping; committed partitions are kept", file=sys.stderr, flush=True)
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        if asked:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up below runs to its end
            _clean(output, prog)
        signal.signal(signal.SIGTERM, previous)


def _clean(output: str, prog: str) -> None:
    if not is_local(output):
        return
    root = local_path(output).rstrip("/")
    fs = LocalFs()
    done = recover(root, fs=fs)
    gone = remove_orphan_staging(root, fs=fs)
    try:
        last = json.loads(Path(root, RANGE_PROGRESS_FILE).read_text()).get("committed")
    except (OSError, ValueError, AttributeError):
        last = None
    print(f"{prog}: cancelled: {output} keeps every committed partition"
          f"{f' (the last: {last})' if last else ''}{'; ' + done if done else ''}"
          f"{'; removed ' + ', '.join(gone) if gone else ''}; the output lock is released", file=sys.stderr,
          flush=True)


def stop_spark_submit(process: psutil.Process, application: str, grace: float = GRACE_SECONDS) -> bool:
    """SIGTERM the driver(s) of `application` under the spark-submit `process`, then wait for spark-submit to end;
    True if it did within `grace` seconds. It is not reaped here: the hook that started it waits for it."""
    if _ended(process):
        return True
    try:
        below = process.children(recursive=True)
    except psutil.Error:
        below = []
    for p in below:
        try:
            if any(application in part for part in p.cmdline()):
                p.send_signal(signal.SIGTERM)
        except psutil.Error:
            continue
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if _ended(process):
            return True
        time.sleep(0.1)
    return _ended(process)


def _ended(process: psutil.Process) -> bool:
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def write_cancel_record(run_dir: str | Path, job: int | None, jobs: int | None, partitions: Sequence[str]) -> Path:
    """`<run folder>/cancelled.json`: when the run was stopped and the chunk that was replaying."""
    folder = Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CANCEL_FILE
    tmp = path.with_name(f".{CANCEL_FILE}.tmp")
    tmp.write_text(json.dumps({"at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "job": job,
                               "jobs": jobs, "partitions": list(partitions)}, indent=1) + "\n")
    tmp.replace(path)
    return path
