"""Cancelling a replay (orchestration/cancel.py), on real runs:

- `replay run --partitions` stopped with SIGTERM while its span is staged: exit 130, the partitions committed by an
  earlier run kept, no staging, no journal, no lock; the same command then runs to its end;
- a backfill DAG run marked failed in Airflow (the REST API, as the UI's "Mark as failed" does) while its second
  Spark job runs, under `airflow standalone` (started and stopped by `make airflow`'s wrapper): the task's on_kill
  stops the Spark job, the output is consistent, the run's record says so, the Replay runs page says "cancelled
  after partition 1 of 3", and `replay verify` finds the input the run recorded.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from airflow_env import ROOT, VENV_BIN, airflow_env, free_port, write_config
from event_replay.samples.days import generate_days, write_days

pytestmark = [pytest.mark.spark, pytest.mark.timeout(3600), pytest.mark.integration]
DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]
USER, PASSWORD = "replay-operator", "cancel-pw-123"


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name.startswith(("_staging-", "_commit.json", "_lock")))


def _replay(config: Path, *args: str) -> list[str]:
    return [str(VENV_BIN / "replay"), "run", "--config", str(config), "--master", "local[2]",
            "--conf", "spark.sql.shuffle.partitions=4", "--conf", "spark.default.parallelism=2", *args]


def test_sigterm_stops_a_range_replay_and_keeps_what_is_committed(tmp_path):
    write_days(tmp_path / "log", generate_days(DAYS[0], days=5, rows_per_day=300, splits=3, seed=3, rate=20.0))
    out = tmp_path / "out"
    config = write_config(tmp_path / "job.yaml", tmp_path / "log", out)
    first = subprocess.run(_replay(config, "--partitions", f"{DAYS[0]}..{DAYS[1]}", "--first"), capture_output=True,
                           text=True, timeout=1800)
    assert first.returncode == 0, first.stderr[-3000:]
    committed = {p: sorted((out / "windows" / f"dt={p}").iterdir()) for p in DAYS[:2]}
    cmd = _replay(config, "--partitions", "2024-01-03..2024-01-05", "--end-of-input", "flush")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.name.startswith("_staging-") for p in out.iterdir()):
            break  # the span's outputs are being staged: nothing of 2024-01-03.. committed yet
        time.sleep(0.05)
    assert proc.poll() is None, "the replay ended before it could be stopped"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err[-3000:]
    assert "SIGTERM: stopping" in err and "the output lock is released" in err, err[-3000:]
    assert _leftovers(out) == [], _leftovers(out)
    assert {p: sorted((out / "windows" / f"dt={p}").iterdir()) for p in DAYS[:2]} == committed
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (out / "windows" / "dt=2024-01-05").is_dir() and _leftovers(out) == []


def _api(base: str, path: str, token: str | None = None, body: dict | None = None, method: str = "GET"):
    req = urllib.request.Request(f"{base}{path}", data=None if body is None else json.dumps(body).encode(),
                                 method=method, headers={"Content-Type": "application/json",
                                                         **({"Authorization": f"Bearer {token}"} if token else {})})
    with urllib.request.urlopen(req, timeout=60) as r:
        raw = r.read()
        return json.loads(raw) if r.headers.get_content_type() == "application/json" else raw.decode()


def _wait(what: str, check, timeout: float, log: Path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = check()
        except (urllib.error.URLError, OSError, KeyError, ValueError):
            value = None
        if value:
            return value
        time.sleep(2)
    raise AssertionError(f"timed out waiting for {what}:\n{log.read_text(errors='replace')[-6000:]}")


def test_marking_a_running_backfill_failed_stops_its_spark_job(tmp_path):
    import psutil

    write_days(tmp_path / "log", generate_days(DAYS[0], days=3, rows_per_day=2000, splits=3, seed=3, rate=20.0))
    out = tmp_path / "out"
    config = write_config(tmp_path / "job.yaml", tmp_path / "log", out)
    home, port = tmp_path / "airflow", free_port()
    home.mkdir()
    (home / "passwords.json").write_text(json.dumps({USER: PASSWORD}))
    base = f"http://127.0.0.1:{port}"
    env = airflow_env(home, **{
        "AIRFLOW__CORE__AUTH_MANAGER": "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:admin",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
        "AIRFLOW__API__PORT": str(port), "AIRFLOW__API__BASE_URL": base, "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__API_AUTH__JWT_SECRET": "cancel-test-jwt-secret-0123456789abcdef0123456789abcdef0123456789",
        "REPLAY_RUNS_ROOT": str(tmp_path)})
    subprocess.run([str(VENV_BIN / "airflow"), "db", "migrate"], env=env, cwd=ROOT, check=True, capture_output=True,
                   timeout=900)
    subprocess.run([str(VENV_BIN / "airflow"), "pools", "set", "replay_spark", "1", "spark"], env=env, cwd=ROOT,
                   check=True, capture_output=True, timeout=600)
    log = tmp_path / "standalone.log"
    with open(log, "w") as sink:
        standalone = subprocess.Popen([sys.executable, "-m", "event_replay.orchestration.standalone"], env=env,
                                      cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait("the API server", lambda: _api(base, "/api/v2/monitor/health"), 900, log)
        token = _api(base, "/auth/token", body={"username": USER, "password": PASSWORD}, method="POST")["access_token"]
        _wait("the DAG to be parsed", lambda: _api(base, "/api/v2/dags/event_time_backfill", token), 900, log)
        conf = {"config": str(config), "start_date": DAYS[0], "end_date": DAYS[-1], "partitions_per_job": 1,
                "run_data_quality": False}
        run = _api(base, "/api/v2/dags/event_time_backfill/dagRuns", token, {"logical_date": None, "conf": conf},
                   "POST")
        run_id = run["dag_run_id"]
        folder = _wait("the first job to be done and the second one on", lambda: next(
            (f for f in (out / "_airflow").glob("*") if (f / "done" / DAYS[0]).exists()
             and json.loads((f / "replaying.json").read_text())["job"] == 2), None), 1800, log)
        time.sleep(5)  # the second job's Spark application is up
        jobs = [p for p in psutil.process_iter() if any(str(folder / "job.yaml") in a for a in _args(p))]
        assert jobs, "no Spark job of the run is running"
        _api(base, f"/api/v2/dags/event_time_backfill/dagRuns/{run_id}", token, {"state": "failed"}, "PATCH")
        _wait("the Spark job to stop", lambda: not [p for p in jobs if _running(p)], 120, log)
        _wait("the task to fail", lambda: _api(base, f"/api/v2/dags/event_time_backfill/dagRuns/{run_id}/"
                                                     "taskInstances/replay_partitions", token)["state"] == "failed",
              300, log)
        assert (folder / "cancelled.json").is_file()
        assert _leftovers(out) == [], _leftovers(out)  # staging removed, no journal, the lock released
        assert (out / "windows" / f"dt={DAYS[0]}").is_dir()  # the committed partition is kept
        page = _api(base, "/replay-runs/", token)
        assert "cancelled after partition 1 of 3" in page, page[-4000:]
        verify = subprocess.run([str(VENV_BIN / "replay"), "verify", str(folder)], capture_output=True, text=True,
                                timeout=300)
        assert verify.returncode == 0 and "a rerun reads the same input" in verify.stdout, verify.stdout
    finally:
        standalone.send_signal(signal.SIGTERM)
        try:
            standalone.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(standalone.pid, signal.SIGKILL)


def _args(p) -> list[str]:
    try:
        return p.cmdline()
    except Exception:  # noqa: BLE001 - gone or not ours
        return []


def _running(p) -> bool:
    import psutil

    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
