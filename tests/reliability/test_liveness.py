"""The soak's liveness probe of the scheduler (tests/reliability/liveness.py) against a real health check server (an
HTTP server answering 200 or 503 as Airflow's does), on a manual clock: failures count from the first success or once
the startup time has passed, a success ends a run of failures, and it probes at most once a period."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from liveness import Liveness, healthy


class _Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def health():
    """A health check server on a free port: its `answer` (200 or 503) is what /health returns."""
    state = {"answer": 503}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(state["answer"]) if self.path == "/health" else self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state, f"http://127.0.0.1:{server.server_port}/health"
    server.shutdown()
    server.server_close()


def test_a_starting_scheduler_fails_uncounted_until_its_startup_time_has_passed(health):
    state, url = health
    clock = _Clock()
    probe = Liveness(url, period=15, startup=300, clock=clock)
    for _ in range(19):  # 0..270 s: not heartbeating yet, still starting
        assert probe.probe() is False and probe.failing_for() == 0
        clock.t += 15
    clock.t += 30  # 300 s after the start: every failure counts from now
    assert probe.probe() is False and probe.failing_for() == 0
    clock.t += 90
    assert probe.probe() is False and probe.failing_for() == 90


def test_after_its_first_success_a_failure_counts_at_once_and_a_success_ends_the_run(health):
    state, url = health
    clock = _Clock()
    probe = Liveness(url, period=15, startup=300, clock=clock)
    state["answer"] = 200
    assert probe.probe() is True and probe.up
    state["answer"] = 503  # its heartbeat is stale (a loop that lost PostgreSQL)
    clock.t += 15
    assert probe.probe() is False
    clock.t += 60
    assert probe.probe() is False and probe.failing_for() == 60
    state["answer"] = 200
    clock.t += 15
    assert probe.probe() is True and probe.failing_for() == 0
    probe.started()  # started again: a startup probe again
    state["answer"] = 503
    clock.t += 15
    assert probe.probe() is False and probe.failing_for() == 0 and not probe.up


def test_it_probes_at_most_once_a_period(health):
    state, url = health
    clock = _Clock()
    probe = Liveness(url, period=15, startup=0, clock=clock)
    assert probe.probe() is False
    clock.t += 14
    assert probe.probe() is None  # not probed: too soon
    clock.t += 1
    state["answer"] = 200
    assert probe.probe() is True


def test_no_server_and_a_503_are_not_healthy(health):
    state, url = health
    assert not healthy(url)
    state["answer"] = 200
    assert healthy(url)
    assert not healthy(url.replace("/health", "/other"))
    server_gone = HTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server_gone.server_port
    server_gone.server_close()  # nothing listens there: refused
    assert not healthy(f"http://127.0.0.1:{port}/health", timeout=2)


def test_the_soak_restarts_a_scheduler_whose_probe_failed_for_its_bound(health, tmp_path):
    """Soak.probe_scheduler on the real probe: the scheduler is killed and started again once the probe has failed
    LIVENESS_BOUND seconds, not before; said as a kill of an unhealthy scheduler, not as a fault drawn (the kill and
    the start are recorded here: they need the soak's Airflow)."""
    import argparse
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("soak_probe", Path(__file__).resolve().parents[2] / "scripts" / "soak.py")
    soak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soak)
    state, url = health
    clock = _Clock()
    s = soak.Soak(argparse.Namespace(work=str(tmp_path), seed=32, faults=None))
    s.work.mkdir(parents=True, exist_ok=True)
    s.liveness = Liveness(url, period=soak.LIVENESS_PERIOD, startup=soak.LIVENESS_STARTUP, clock=clock)
    done: list[str] = []
    s.procs["scheduler"] = argparse.Namespace(pid=4242)
    s.kill_scheduler = lambda: done.append("kill") or 4242

    def start(name, *args):
        done.append(f"start {name}")
        s.liveness.started()
        return argparse.Namespace(pid=4343)

    s.start_service = start
    state["answer"] = 200
    s.probe_scheduler()
    assert [e["kind"] for e in s.events] == ["scheduler_up"]
    state["answer"] = 503  # its loop lost PostgreSQL: no heartbeat, the process still there
    while clock.t - 1000 < soak.LIVENESS_BOUND + soak.LIVENESS_PERIOD:
        clock.t += soak.LIVENESS_PERIOD
        s.probe_scheduler()
        if done:
            break
    assert done == ["kill", "start scheduler"] and s.restarts == 1 and s.kills["scheduler_group"] == 0
    assert clock.t - 1000 - soak.LIVENESS_PERIOD >= soak.LIVENESS_BOUND  # not before the bound
    assert [e["kind"] for e in s.events[1:]] == ["scheduler_not_heartbeating", "kill", "restart"]
    assert [e.get("target") for e in s.events[-2:]] == ["scheduler_unhealthy", "scheduler"]
    state["answer"] = 200
    clock.t += soak.LIVENESS_PERIOD
    s.probe_scheduler()
    assert s.events[-1]["kind"] == "scheduler_up" and done == ["kill", "start scheduler"]
