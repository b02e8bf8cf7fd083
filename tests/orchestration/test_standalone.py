"""`make airflow` (orchestration/standalone.py): Ctrl+C or a SIGTERM to make stops every process it started, the
API server, scheduler (and its executor's workers), DAG processor and triggerer of `airflow standalone` included;
and the LocalExecutor starts one worker per core, not Airflow's default 32."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from airflow_env import free_port

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
COMPONENTS = ("api_server", "scheduler", "dag-processor", "triggerer")
START_TIMEOUT, STOP_TIMEOUT = 900, 120


def _tree(pid: int) -> list:
    import psutil

    try:
        return [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def _alive(procs) -> list:
    import psutil

    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.Error:
            continue
    return out


def _cmdline(p) -> str:
    import psutil

    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


@pytest.mark.parametrize("stop", ["sigterm-to-make", "ctrl-c"])
def test_make_airflow_stops_every_process_it_started(tmp_path_factory, stop):
    home = tmp_path_factory.getbasetemp() / "standalone-home"  # one metadata DB for both cases: migrated once
    port = free_port()
    log = open(tmp_path_factory.mktemp("log") / "make-airflow.log", "w")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    proc = subprocess.Popen(["make", "-s", "airflow", f"AIRFLOW_HOME_DIR={home}", f"AIRFLOW_PORT={port}"], cwd=ROOT,
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # its own terminal
    seen: dict[int, object] = {}
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            assert proc.poll() is None, Path(log.name).read_text()[-4000:]
            for p in _tree(proc.pid):
                seen.setdefault(p.pid, p)
            lines = [_cmdline(p) for p in _alive(seen.values())]
            if all(any(c in line for line in lines) for c in COMPONENTS) and \
                    any("worker" in line for line in lines):
                break
            time.sleep(2)
        else:
            pytest.fail(f"make airflow did not start its components in {START_TIMEOUT} s:\n"
                        + Path(log.name).read_text()[-4000:])
        time.sleep(5)
        for p in _tree(proc.pid):
            seen.setdefault(p.pid, p)
        workers = [p for p in _alive(seen.values()) if _cmdline(p).startswith("airflow worker")]
        assert 2 <= len(workers) <= max(2, os.cpu_count() or 2), [_cmdline(p) for p in workers]
        if stop == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)  # what the terminal sends to its foreground process group
        else:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=STOP_TIMEOUT)
        deadline = time.monotonic() + 10
        while _alive(seen.values()) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = [f"{p.pid} {_cmdline(p)}" for p in _alive(seen.values())]
        assert left == [], left
        assert "stopping airflow standalone and every process it started" in Path(log.name).read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for p in _alive(seen.values()):
            p.kill()
        log.close()
