"""The soak's draw of faults (scripts/soak.py `Soak.chaos`): each fault is of a kind drawn fewest times so far, a
driver counting half, so a short soak's three or four faults are of as many kinds and a long one meets every kind;
a driver only while one runs, the disk of DISK_OUTPUT filled only while one of its chunks runs (drawn between two,
it waits for the next). The faults themselves are
test_chaos.py's; here each `fault_*` only records that it was chosen (running them needs the soak's services)."""
from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from chaos import mount_tmpfs, unmount

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("scheduler_group", "driver", "postgres", "spark_worker", "disk_full")


@functools.cache
def _soak_module():
    spec = importlib.util.spec_from_file_location("soak_script", ROOT / "scripts" / "soak.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _soak(tmp_path, drivers, seed=32, faults=None):
    soak = _soak_module()
    s = soak.Soak(argparse.Namespace(work=str(tmp_path), seed=seed, faults=faults))
    chosen: list[str] = []
    s.drivers = lambda: drivers
    for kind in KINDS:
        setattr(s, f"fault_{kind}", lambda _drivers, kind=kind: chosen.append(kind))
    return soak, s, chosen


def test_a_short_soaks_faults_are_of_as_many_kinds(tmp_path):
    disk = tmp_path / "own-1-disk"
    drivers = [(101, "driver_jvm", f"spark-submit jobs/replay_job.py --config {disk}/run.yaml")]
    for seed in range(20):
        _, s, chosen = _soak(tmp_path, drivers, seed)
        s.disk = disk
        for _ in range(3):
            s.chaos()
        assert len(set(chosen)) == 3, (seed, chosen)
        for _ in range(3):
            s.chaos()
        assert set(chosen) == set(KINDS), (seed, chosen)  # six faults: every kind, a driver twice or another once


def test_a_long_soak_kills_drivers_twice_as_often(tmp_path):
    drivers = [(101, "driver_python", "python jobs/replay_job.py")]
    _, s, chosen = _soak(tmp_path, drivers)
    for _ in range(40):
        s.chaos()
    counts = Counter(chosen)
    assert "disk_full" not in counts  # no chunk of DISK_OUTPUT's ran (its disk is not mounted)
    assert counts == {"driver": 16, "scheduler_group": 8, "postgres": 8, "spark_worker": 8}


def test_without_a_driver_running_none_is_drawn_and_it_comes_next(tmp_path):
    _, s, chosen = _soak(tmp_path, [])
    for _ in range(3):
        s.chaos()
    assert sorted(chosen) == ["postgres", "scheduler_group", "spark_worker"]
    s.drivers = lambda: [(101, "driver_jvm", "spark-submit jobs/replay_job.py")]
    s.chaos()
    assert chosen[-1] == "driver"  # drawn fewest times (never) now that one runs


def test_a_full_disk_drawn_between_two_chunks_waits_for_the_next(tmp_path):
    soak, s, chosen = _soak(tmp_path, [(101, "driver_jvm", "spark-submit jobs/replay_job.py --config other.yaml")])
    s.disk = tmp_path / "disk"
    while "disk_full" not in {e.get("target") for e in s.events}:
        s.chaos()
    assert s.disk_pending and "disk_full" not in chosen  # no chunk of its output runs: not filled yet
    before = list(chosen)
    s.chaos()  # the next fault is of another kind; the disk stays pending
    assert chosen[-1] != "disk_full" and len(chosen) == len(before) + 1 and s.disk_pending
    s.pending_faults()
    assert "disk_full" not in chosen
    s.drivers = lambda: [(102, "driver_jvm", f"spark-submit jobs/replay_job.py --config {s.disk}/own-1/job.yaml")]
    s.pending_faults()
    assert chosen[-1] == "disk_full" and not s.disk_pending


def test_faults_limits_the_kinds(tmp_path):
    _, s, chosen = _soak(tmp_path, [], faults="driver,postgres")
    for _ in range(2):
        s.chaos()
    assert chosen == ["postgres", "postgres"]  # no driver runs: PostgreSQL is the one kind that can happen
    s.drivers = lambda: [(101, "driver_jvm", "spark-submit jobs/replay_job.py")]
    for _ in range(5):
        s.chaos()
    # a driver catches up (counting half: 4 draws to PostgreSQL's 2), then they alternate
    assert chosen[2:6] == ["driver"] * 4 and sorted(chosen[6:]) in (["driver"], ["postgres"])
    _, s, chosen = _soak(tmp_path, [], faults="driver")
    s.chaos()
    assert chosen == []  # only drivers, and none runs: no fault this time


def test_a_full_disk_stays_full_until_its_chunk_has_ended(tmp_path):
    disk = mount_tmpfs("1m")
    if disk is None:
        pytest.skip("cannot mount a tmpfs here (needs root and a kernel that allows it)")
    chunk = subprocess.Popen(["sleep", "600"])  # the chunk's driver
    try:
        soak = _soak_module()
        s = soak.Soak(argparse.Namespace(work=str(tmp_path), seed=32, faults="disk_full"))
        s.disk = disk
        s.drivers = lambda: [(chunk.pid, "driver_jvm", f"spark-submit jobs/replay_job.py --config {disk}/own-1/job.yaml")]
        s.chaos()
        assert s.disk_full_for == {chunk.pid} and not _room(disk)
        s.chaos()  # no second fill while it is full
        s.pending_faults()
        s.end_faults()
        assert s.kills["disk_full"] == 1 and not _room(disk) and not s.undo  # its chunk still runs: still full
        chunk.kill()
        chunk.wait()
        s.pending_faults()
        assert [u[1] for u in s.undo] == ["disk freed"] and not _room(disk)  # freed 20-60 s later
        s.end_faults(every=True)  # (the soak's end: every fault ended now)
        assert _room(disk) and s.disk_full_for is None
    finally:
        chunk.kill()
        unmount(disk)


def _room(disk: Path) -> int:
    st = os.statvfs(disk)
    return st.f_bavail * st.f_frsize


def test_the_report_names_the_kinds_never_drawn():
    soak = _soak_module()
    kills = {"scheduler_group": 2, "driver_jvm": 0, "driver_python": 1, "postgres": 1, "spark_worker": 0,
             "disk_full": 0}
    assert soak.not_drawn(kills) == ["spark_worker", "disk_full"]
    assert soak.not_drawn({**kills, "spark_worker": 1, "disk_full": 1}) == []


def test_the_schedulers_downtime_per_postgresql_kill():
    soak = _soak_module()
    events = [{"t": 10, "kind": "kill", "target": "postgres"},
              {"t": 30, "kind": "fault_ended", "what": "postgres started again"},
              {"t": 45, "kind": "scheduler_not_heartbeating"},
              {"t": 140, "kind": "kill", "target": "scheduler_unhealthy"},
              {"t": 141, "kind": "restart", "target": "scheduler"},
              {"t": 200, "kind": "scheduler_up"},
              {"t": 400, "kind": "kill", "target": "postgres"},  # the scheduler went on: no restart after it
              {"t": 600, "kind": "kill", "target": "scheduler_group"},
              {"t": 610, "kind": "restart", "target": "scheduler"},
              {"t": 700, "kind": "scheduler_up"},
              {"t": 800, "kind": "kill", "target": "postgres"},
              {"t": 900, "kind": "service_exited", "service": "scheduler"}]  # up again after the soak's end
    assert soak.scheduler_down_after_postgres(events) == [190, 0, None]
