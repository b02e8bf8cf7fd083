"""A DAG run's turn at an output (orchestration/turn.py): runs that meet at an output wait for each other instead of
failing, the waiting run says which run it waits for (task log, run record), a killed holder's turn is broken at once.
The operator's chunk loop is driven directly with spark-submit recorded, not run (as in test_chunks.py)."""
from __future__ import annotations

import datetime as dt
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from event_replay.orchestration import turn
from event_replay.orchestration.chunks import job_plans
from event_replay.orchestration.plan import plan_range
from event_replay.orchestration.turn import output_turn, turn_path

ROOT = Path(__file__).resolve().parents[2]
D = dt.date.fromisoformat


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch):
    monkeypatch.setattr(turn, "POLL_S", 0.02)


def _wait_for(condition, what: str, seconds: float = 30.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_a_second_holder_waits_for_the_first_and_says_for_whom(tmp_path):
    out, runs = str(tmp_path / "out"), tmp_path / "out" / "_airflow"
    notes, order = [], []

    def second():
        with output_turn(runs, out + "/", "run-b", "dag", on_wait=notes.append) as waits:
            order.append("b")
            second.waits = waits

    with output_turn(runs, out, "run-a", "dag", on_wait=notes.append) as waits:
        assert waits == [] and turn_path(runs, out).is_file()
        t = threading.Thread(target=second)
        t.start()
        _wait_for(lambda: notes, "the second holder to wait")
        time.sleep(0.1)  # many polls: the second still waits while the first holds the turn
        order.append("a")
    t.join(10)
    assert order == ["a", "b"] and not t.is_alive()
    assert len(notes) == 1 and notes[0]["for"] == "run-a" and notes[0]["output"] == out  # one note per holder
    assert "pid" in notes[0]["holder"] and notes[0]["lock_file"] == str(turn_path(runs, out))
    assert [w["for"] for w in second.waits] == ["run-a"] and second.waits[0]["seconds"] >= 0.1
    assert not turn_path(runs, out).exists()  # released


def test_the_turn_is_per_output_and_released_on_failure(tmp_path):
    runs = tmp_path / "runs"  # a runs folder several (remote) outputs share
    with output_turn(runs, "hdfs://nn/a", "r1", "d", on_wait=pytest.fail):
        with output_turn(runs, "hdfs://nn/b", "r2", "d", on_wait=pytest.fail):
            pass
    with pytest.raises(RuntimeError):
        with output_turn(runs, "hdfs://nn/a", "r1", "d", on_wait=pytest.fail):
            raise RuntimeError("the replay failed")
    assert list(runs.iterdir()) == []


def test_a_killed_holders_turn_is_broken_at_once(tmp_path):
    runs, out = tmp_path / "runs", str(tmp_path / "out")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    turn_path(runs, out).parent.mkdir(parents=True)
    turn_path(runs, out).write_text(json.dumps({"host": socket.gethostname(), "pid": int(dead.stdout), "token": "x",
                                                "started": "2024-01-01T00:00:00+00:00", "run_id": "killed"}))
    with output_turn(runs, out, "next", "d", on_wait=pytest.fail) as waits:
        assert waits == [] and json.loads(turn_path(runs, out).read_text())["run_id"] == "next"


# --- two DAG runs' replay tasks on one output ---------------------------------------------------------------------

def _planned(tmp_path: Path, name: str) -> dict:
    have = [(D("2024-01-01") + dt.timedelta(days=i)).isoformat() for i in range(4)]  # partition ids
    plan = plan_range(have, have[0], have[-1], end_of_input="flush")
    out = tmp_path / "out"
    return {"plan": plan.to_dict(), "run_dir": str(out / "_airflow" / name), "output_path": str(out),
            "config_path": "/c.yaml", "partitions_per_job": 2, "jobs": job_plans(plan.runs, 2)}


class TaskLog:
    """The operator's logger, kept as lines (Airflow's task logger is structlog's, out of caplog's sight)."""

    def __init__(self, lines: list[str]):
        self.lines = lines

    def info(self, msg: str, *args) -> None:
        self.lines.append(msg % args)

    warning = info


def _context(planned: dict, run_id: str) -> dict:
    from types import SimpleNamespace

    from airflow.sdk.execution_time.context import OutletEventAccessors

    return {"ti": SimpleNamespace(xcom_pull=lambda task_ids: planned), "outlet_events": OutletEventAccessors(),
            "run_id": run_id, "dag_run": SimpleNamespace(dag_id="event_time_backfill")}


def test_two_runs_on_one_output_take_turns_range_by_range(monkeypatch, tmp_path):
    """Run A holds the output from its first chunk to its last; run B waits (log and run record name A), then
    replays its whole range: no job of B runs between A's jobs, and nothing fails."""
    from event_replay.orchestration.operators import ReplayPartitionsOperator
    from event_replay.orchestration.submit_hook import ReplaySubmitHook

    submitted, go_on, current = [], threading.Event(), threading.local()  # current.run_id: each run's thread

    def fake_submit(self, application="", **kwargs):
        args = list(self.replay_args)
        span = json.loads(args[args.index("--plan") + 1])["partitions"]
        submitted.append((current.run_id, span))
        if current.run_id == "run-a" and span.startswith("2024-01-03"):
            assert go_on.wait(30), "the test never let run A's last job end"
        for day in span.split(".."):
            (tmp_path / "out" / "_state" / day).mkdir(parents=True, exist_ok=True)
            (tmp_path / "out" / "_state" / day / "manifest.json").touch()

    monkeypatch.setattr(ReplaySubmitHook, "submit", fake_submit)
    a, b = _planned(tmp_path, "run-a"), _planned(tmp_path, "run-b")
    errors, logged = [], []

    def run(planned, run_id):
        current.run_id = run_id
        op = ReplayPartitionsOperator(task_id="replay_partitions", plan_task_id="plan", project_dir=str(ROOT))
        op._cached_logger = TaskLog(logged)  # the task log
        try:
            op.execute(_context(planned, run_id))
        except BaseException as exc:  # noqa: BLE001 - reported by the test's assertion
            errors.append(exc)

    first = threading.Thread(target=run, args=(a, "run-a"))
    second = threading.Thread(target=run, args=(b, "run-b"))
    record_b = Path(b["run_dir"]) / "run.json"
    try:
        first.start()
        _wait_for(lambda: ("run-a", "2024-01-03..2024-01-04") in submitted, "run A's last job")
        second.start()
        _wait_for(lambda: record_b.is_file() and (json.loads(record_b.read_text()).get("waiting") or {}).get("for"),
                  "run B's record to say it waits")
        assert json.loads(record_b.read_text())["waiting"]["for"] == "run-a"
        assert [s for s in submitted if s[0] == "run-b"] == []
    finally:  # never leave a thread running past the test (and its spark-submit patch)
        go_on.set()
        first.join(30)
        if second.is_alive() or second.ident is not None:
            second.join(30)
    assert any(line.startswith("waiting for run run-a (DAG event_time_backfill)") for line in logged), logged
    assert errors == [] and not first.is_alive() and not second.is_alive()
    assert submitted == [("run-a", "2024-01-01..2024-01-02"), ("run-a", "2024-01-03..2024-01-04"),
                         ("run-b", "2024-01-01..2024-01-02"), ("run-b", "2024-01-03..2024-01-04")]
    record = json.loads(record_b.read_text())
    assert record["waiting"] is None and [w["for"] for w in record["waited"]] == ["run-a"]
    assert not list((tmp_path / "out" / "_airflow").glob("_turn-*"))


def test_a_chunk_waits_while_a_live_driver_holds_the_jobs_lock(monkeypatch, tmp_path):
    """A driver that outlived its task (Airflow killed or reset it; its spark-submit went on) holds the job's lock:
    the next try's chunk waits for it (log, record) instead of submitting a job that would be refused; a stale
    lock (its pid gone) is not waited for: the job breaks it."""
    from event_replay.io.lock import lock_path
    from event_replay.orchestration.operators import ReplayPartitionsOperator
    from event_replay.orchestration.submit_hook import ReplaySubmitHook

    submitted = []
    monkeypatch.setattr(ReplaySubmitHook, "submit", lambda self, application="", **kw: submitted.append(time.monotonic()))
    monkeypatch.setattr("event_replay.orchestration.backfill.partition_rows_read", lambda *a: 0)
    (tmp_path / "out").mkdir()
    driver = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    lock = Path(lock_path(str(tmp_path / "out")))
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": driver.pid, "token": "t",
                                "started": "2024-01-01T00:00:00+00:00", "args": ["replay_job.py", "--config", "x"]}))
    planned = _planned(tmp_path, "run-a")
    planned["partitions_per_job"] = 4  # one chunk
    logged, errors = [], []

    def run(planned=planned, run_id="run-a"):
        op = ReplayPartitionsOperator(task_id="replay_partitions", plan_task_id="plan", project_dir=str(ROOT))
        op._cached_logger = TaskLog(logged)
        try:
            op.execute(_context(planned, run_id))
        except BaseException as exc:  # noqa: BLE001 - reported by the test's assertion
            errors.append(exc)

    task = threading.Thread(target=run)
    record = Path(planned["run_dir"]) / "run.json"
    try:
        task.start()
        _wait_for(lambda: record.is_file() and (json.loads(record.read_text()).get("waiting") or {}).get("holder"),
                  "the record to say the run waits")
        time.sleep(0.1)
        assert submitted == [] and f"pid {driver.pid}" in json.loads(record.read_text())["waiting"]["holder"]
    finally:
        driver.kill()
        driver.wait()
        task.join(30)
    assert errors == [] and len(submitted) == 1
    assert any(line.startswith(f"waiting for pid {driver.pid} on ") and "it holds the job's lock" in line
               for line in logged), logged
    assert json.loads(record.read_text())["waiting"] is None
    # The driver is dead now: its lock is stale, left for the job to break; the next run does not wait.
    logged.clear()
    again = _planned(tmp_path, "run-b")
    again["partitions_per_job"] = 4
    run(again, "run-b")
    assert lock.exists()
    assert errors == [] and len(submitted) == 2 and not any(line.startswith("waiting") for line in logged)
