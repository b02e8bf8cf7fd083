"""`make airflow`: `airflow standalone`, and every process it starts stops with it.

`airflow standalone` starts the API server, the scheduler (with its LocalExecutor workers), the DAG processor and
the triggerer as subprocesses. Stopped with SIGTERM it left them running. This runs it in a session of its own
and, on SIGINT (Ctrl+C in the terminal) or SIGTERM (GNU make passes a SIGTERM on to the recipe it runs), stops the
whole tree: SIGTERM to every process of the session and below the standalone, up to GRACE_SECONDS for them to end,
then SIGKILL for whatever is left (a task's Spark job included). The exit code is the standalone's, or 128 + the
signal that stopped it.

    python -m event_replay.orchestration.standalone [airflow standalone's arguments]
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import psutil

GRACE_SECONDS = 20.0


def _tree(pid: int) -> list:
    """The process `pid`, everything below it, and every process still in its session (one that lost its parent
    to init stays in the session unless it made its own)."""
    found: dict[int, psutil.Process] = {}
    try:
        root = psutil.Process(pid)
        found[pid] = root
        found.update({p.pid: p for p in root.children(recursive=True)})
    except psutil.Error:
        pass
    for p in psutil.process_iter():
        try:
            if p.pid not in found and p.pid != os.getpid() and os.getsid(p.pid) == pid:
                found[p.pid] = p
                found.update({c.pid: c for c in p.children(recursive=True)})
        except (psutil.Error, OSError):
            continue
    return list(found.values())


def _running(procs) -> list:
    out = {}
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out[p.pid] = p
        except psutil.Error:
            continue
    return list(out.values())


def stop(pid: int, grace: float = GRACE_SECONDS) -> list[int]:
    """SIGTERM the tree of `pid` (see _tree), wait up to `grace` seconds, SIGKILL the rest; returns the pids that
    had to be killed. A process that appears meanwhile (a worker respawned) is stopped too."""
    seen: list = []
    deadline = time.monotonic() + grace
    while True:
        alive = _running(seen + _tree(pid))
        fresh = [p for p in alive if p.pid not in {q.pid for q in seen}]
        for p in fresh:
            try:
                p.send_signal(signal.SIGTERM)
            except psutil.Error:
                pass
        seen += fresh
        if not alive or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    killed = []
    for p in _running(seen + _tree(pid)):
        try:
            p.kill()
            killed.append(p.pid)
        except psutil.Error:
            pass
    return killed


def main(argv: list[str]) -> int:
    airflow = shutil.which("airflow") or os.path.join(os.path.dirname(sys.executable), "airflow")
    child = subprocess.Popen([airflow, "standalone", *argv], start_new_session=True)
    got: list[int] = []

    def on_signal(signum, frame):
        got.append(signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    while child.poll() is None and not got:
        try:
            child.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            pass
    if got:
        name = signal.Signals(got[0]).name
        print(f"airflow: {name}: stopping airflow standalone and every process it started", file=sys.stderr,
              flush=True)
    killed = stop(child.pid)
    if killed:
        print(f"airflow: {len(killed)} process(es) did not stop on SIGTERM within {GRACE_SECONDS:.0f} s: killed "
              f"({', '.join(map(str, killed))})", file=sys.stderr, flush=True)
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    if got:
        return 128 + got[0]
    return child.returncode or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
