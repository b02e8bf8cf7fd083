"""Crash safety (issue 7): `replay run --partition` killed with SIGKILL at each point of its commit.

Setup: day 1 replayed (--first), then day 2 with --end-of-input flush: the "previous outputs". Each case replays
day 2 again (hold: different windows and state) in a subprocess that kills itself (REPLAY_FAILPOINT, see
io/failpoints.py) at one point. Right after the kill, a reader (io.commit.recover, run as any reader would)
must find either the previous outputs or the new ones, complete, never a mix, and day 1 untouched; the rerun
must then give identical outputs and state to an uninterrupted run: the same files with the same content (schema
with its metadata, rows in order). Not raw Parquet bytes: parquet-mr writes a column chunk's list of encodings in
the iteration order of a hash set of enums, which changes from one JVM to the next (two clean runs differ there).

Every run is a subprocess (one JVM at a time); `between_renames` is in the default suite, the other points are
marked `slow` (each costs two Spark start-ups).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from event_replay.io.commit import JOURNAL, recover
from event_replay.io.failpoints import POINTS
from event_replay.io.fs import LocalFs

pytestmark = pytest.mark.spark
REPLAY = str(Path(sys.executable).parent / "replay")
DAY1, DAY2 = "2024-01-01", "2024-01-02"
# Where the run is when killed: before the commit point (journal) the previous outputs stay; after it, a
# reader rolls the commit forward to the new ones.
COMMITTED = {"mid_staging": False, "after_staging": False, "after_journal": True, "between_renames": True,
             "before_state": True, "before_cleanup": True}


def run(args, env_extra=None, timeout=900):
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env_extra or {})}
    proc = subprocess.Popen([REPLAY, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # its own process group: the JVM it starts is in it too
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        _wait_group_gone(proc.pid)
    return proc.returncode, out, err


def _wait_group_gone(pgid: int, timeout: float = 60) -> None:
    """After a kill -9 of the Python driver, its JVM exits on its own (its stdin closes); wait for it, so that
    nothing still writes when the next run starts."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        if time.monotonic() > deadline:
            os.killpg(pgid, signal.SIGKILL)
        time.sleep(0.1)


def content_digest(f: Path) -> str:
    """A Parquet file's decoded content (schema + metadata, rows in file order) as Arrow IPC bytes; other files'
    bytes as they are."""
    if f.suffix != ".parquet":
        return hashlib.sha256(f.read_bytes()).hexdigest()
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(f)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


def digests(out: Path) -> dict[str, list[str]]:
    """Every folder of the outputs -> the sorted content digests of its files (part names carry a random id)."""
    d: dict[str, list[str]] = {}
    for f in sorted(out.rglob("*")):
        rel = f.relative_to(out)
        if not f.is_file() or rel.parts[0].startswith(("_staging-", "_lock", "_commit")) or f.name.endswith(".crc"):
            continue
        d.setdefault(str(rel.parent), []).append(content_digest(f))
    return {k: sorted(v) for k, v in d.items()}


def day(ds: dict[str, list[str]], which: str) -> dict[str, list[str]]:
    return {k: v for k, v in ds.items() if f"dt={which}" in k or k.endswith(f"_state/{which}") or
            f"_state/{which}/" in k}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("crash")
    log = base / "log"
    rc, _, err = run(["sample", "--out", str(log), "--rows", "3000", "--splits", "3", "--seed", "5",
                      "--rate", "0.025", "--start", f"{DAY1}T00:00:00Z", "--partitioned", "day", "--files", "1"])
    assert rc == 0, err
    assert sorted(p.name for p in log.iterdir()) == [f"dt={DAY1}", f"dt={DAY2}"]
    cfg = base / "job.yaml"
    cfg.write_text(yaml.safe_dump({
        "source": {"path": str(log), "splits": ["p0", "p1", "p2"]},
        "watermark": {"max_out_of_orderness": "5s", "interval": "1s", "idle_timeout": "10m"},
        "window": {"type": "tumbling", "size": "1h", "allowed_lateness": "1m"},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
        "output": {"path": str(base / "out")}}))
    out = base / "out"
    master = ["--master", "local[1]"]
    for args in (["--partition", DAY1, "--first"], ["--partition", DAY2, "--end-of-input", "flush"]):
        rc, _, err = run(["run", "--config", str(cfg), *master, *args])
        assert rc == 0, err
    previous = base / "previous"
    shutil.copytree(out, previous)
    rc, _, err = run(["run", "--config", str(cfg), *master, "--partition", DAY2])
    assert rc == 0, err
    reference = digests(out)
    shutil.rmtree(out)
    prev = digests(previous)
    assert day(prev, DAY2) != day(reference, DAY2)  # flush vs hold: the two versions differ
    assert day(prev, DAY1) == day(reference, DAY1) and day(prev, DAY1)
    return {"cfg": cfg, "out": out, "previous": previous, "prev": prev, "reference": reference, "master": master}


# In `make test` the point in the middle of the renames; every point with `-m slow` (make test-slow; each costs two
# Spark start-ups).
DEFAULT_POINTS = ("between_renames",)


@pytest.mark.parametrize("point", [pytest.param(p, marks=() if p in DEFAULT_POINTS else pytest.mark.slow)
                                   for p in POINTS])
def test_kill_at_each_commit_point_then_rerun(setup, point):
    out: Path = setup["out"]
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(setup["previous"], out)
    args = ["run", "--config", str(setup["cfg"]), *setup["master"], "--partition", DAY2]
    rc, _, err = run(args, {"REPLAY_FAILPOINT": point})
    assert rc == -signal.SIGKILL, (rc, err[-3000:])
    assert f"failpoint {point}" in err
    assert (out / "_lock").exists()  # the killed run could not release it

    # What a reader finds, after rolling forward a journal if there is one.
    assert (out / JOURNAL).exists() == COMMITTED[point]
    if COMMITTED[point]:
        assert recover(str(out), fs=LocalFs()) is not None
        assert digests(out) == setup["reference"], "after the commit point the new outputs must be complete"
    else:
        assert digests(out) == setup["prev"], "before the commit point the previous outputs must be intact"
        assert any(p.name.startswith("_staging-") for p in out.iterdir())  # the dead run's staging is left

    # The rerun (e.g. an Airflow retry) breaks the dead run's lock, cleans up, and writes the same bytes as a
    # run that was never interrupted.
    rc, stdout, err = run(args)
    assert rc == 0, err[-3000:]
    assert digests(out) == setup["reference"]
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("_")) == ["_state"]
