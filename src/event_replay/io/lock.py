"""One run at a time per job output: an exclusive lock file `<output.path>/_lock`.

Taken by creating the file atomically (O_EXCL locally, `create(overwrite=false)` on a Hadoop FileSystem); it
holds the holder's host, pid, start time and arguments, and is removed when the run ends, also on failure. A
second run on the same output fails at once with a message naming the holder (it does not wait: the caller,
e.g. an Airflow retry, decides when to try again). A lock left by a killed run is broken only when it is
provably stale: same host and the pid no longer exists. A lock from another host is never broken
automatically (we cannot see its processes): the message says which file to delete once that run is known dead.

`take` and `release` are the lock file's two steps for a caller that waits instead of failing (a DAG run's turn at
an output: orchestration/turn.py): one attempt that breaks a stale holder at once, and a release of our own lock.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import socket
import sys
import time
import uuid
from contextlib import contextmanager
from typing import Iterator

from .commit import NoSpaceError, no_space, recover, remove_orphan_staging
from .fs import Fs, fs_for
from .scratch import scratch_space

LOCK = "_lock"
_HELD: set[str] = set()  # outputs this process holds (re-entrant: the CLI takes it before Spark, the job again)


class OutputLocked(RuntimeError):
    """Another run holds the output's lock."""


def lock_path(output: str) -> str:
    return f"{output.rstrip('/')}/{LOCK}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, another user's
    return True


def _stale(holder: dict) -> bool:
    return holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int) \
        and not _pid_alive(holder["pid"])


def held_here(holder: dict | None) -> bool:
    """The lock's holder is a live process of this host (never true of an unreadable lock or another host's)."""
    return bool(holder) and holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int) \
        and _pid_alive(holder["pid"])


def describe(holder: dict | None, raw: str | None) -> str:
    if not holder:
        return f"an unreadable lock ({raw!r})"
    return (f"pid {holder.get('pid')} on {holder.get('host')} since {holder.get('started')} "
            f"({' '.join(holder.get('args') or [])})")


def read_holder(fs: Fs, path: str, patience_s: float = 2.0) -> tuple[str | None, dict | None]:
    """The lock's text and holder. On a Hadoop FileSystem the holder creates the file, then writes it: an empty
    or partial lock is re-read for a moment before it is called unreadable."""
    deadline = time.monotonic() + patience_s
    while True:
        raw = fs.read_text(path)
        try:
            holder = json.loads(raw) if raw else None
        except ValueError:
            holder = None
        if holder is not None or raw is None or time.monotonic() >= deadline:
            return raw, holder
        time.sleep(0.05)


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def holder_record(args: list[str] | None = None, **about) -> dict:
    """What a lock file says of its holder: this process (host, pid), a token, when, its arguments, and `about`
    (e.g. the DAG run holding an output's turn)."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "token": uuid.uuid4().hex, "started": utc_now(),
            "args": list(args if args is not None else sys.argv), **about}


def take(fs: Fs, path: str, text: str) -> tuple[bool, str | None, dict | None]:
    """One attempt at the lock file `path` with our `text`: (taken, and if not, the holder's text and holder).
    A provably stale holder (io/lock.py's module doc) is broken and the lock competed for again, at once."""
    for attempt in range(2):
        if fs.create_exclusive(path, text):
            return True, None, None
        raw, holder = read_holder(fs, path)
        if attempt == 0 and raw is None:
            continue  # released between our create and our read: compete again
        if attempt == 0 and holder is not None and _stale(holder):
            # Move the dead holder's lock aside (one rename wins if two runs try), check it was that lock,
            # then compete for a fresh one with the atomic create.
            aside = f"{path}.stale-{uuid.uuid4().hex[:8]}"
            if fs.rename(path, aside):
                moved = fs.read_text(aside)
                fs.delete(aside)
                if moved is not None and moved != raw:
                    fs.create_exclusive(path, moved)  # a live lock taken meanwhile: put it back
            continue
        return False, raw, holder
    return False, None, None


def release(fs: Fs, path: str, text: str) -> None:
    """Remove the lock file if it is still ours (never another holder's)."""
    try:
        if fs.read_text(path) == text:
            fs.delete(path)
    except Exception:  # noqa: BLE001 - the run's own outcome matters more than a failed unlock
        pass


@contextmanager
def output_lock(output: str, spark=None, args: list[str] | None = None, fs: Fs | None = None) -> Iterator[str]:
    """Hold `<output>/_lock` for the duration of the block; raise OutputLocked if someone else holds it."""
    key = output.rstrip("/")
    if key in _HELD:
        yield lock_path(key)
        return
    fs = fs or fs_for(key, spark)
    path = lock_path(key)
    text = json.dumps(holder_record(args), sort_keys=True)
    try:
        fs.mkdirs(key)
        taken, raw, holder = take(fs, path, text)
    except Exception as exc:
        # A full disk met at the lock, before any work (seen in a soak: the output's disk filled while the job's
        # Spark started): one line, as at the outputs' writes, not a traceback.
        if no_space(exc):
            raise NoSpaceError(f"no space left on the device (or quota) of {key} while taking the output's lock "
                               f"{path}: nothing was written, the previous outputs are untouched; free space and run "
                               "again") from None
        raise
    if not taken and raw is None and holder is None:
        raise OutputLocked(f"output {key}: could not take the lock {path}")
    if not taken:
        raise OutputLocked(f"output {key} is locked by {describe(holder, raw)}: another replay of this job "
                           f"is writing it. Wait for it to finish; if it is dead, delete {path}")
    _HELD.add(key)
    try:
        yield path
    finally:
        _HELD.discard(key)
        release(fs, path, text)


@contextmanager
def held_output(spark, output: str) -> Iterator[str]:
    """The output under its lock with a scratch folder (io/scratch.py), an interrupted commit of an earlier run
    rolled forward and staging left by dead runs removed (io/commit.py): what every run does first (pipeline.run,
    range_replay.run_range). Yields the output path."""
    output = output.rstrip("/")
    with output_lock(output, spark), scratch_space(spark, output):
        done = recover(output, spark)
        if done:
            print(f"replay: {output}: {done}", file=sys.stderr, flush=True)
        for name in remove_orphan_staging(output, spark):
            print(f"replay: {output}: removed {name} (left by a run that died before committing)", file=sys.stderr,
                  flush=True)
        yield output
