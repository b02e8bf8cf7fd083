"""The output lock (io/lock.py): one replay per output; a second `replay run` on it is refused at once."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from bad_rows import DATA, REPLAY, bad_rows_cfg
from event_replay.io.fs import LocalFs
from event_replay.io.lock import OutputLocked, read_holder, lock_path, output_lock


def test_output_lock(tmp_path):
    out = str(tmp_path / "out")
    with output_lock(out, args=["replay", "run", "A"]) as path:
        holder = json.loads(Path(path).read_text())
        assert holder["pid"] == os.getpid() and holder["args"] == ["replay", "run", "A"]
        with output_lock(out):  # re-entrant in the process holding it (the CLI, then the job)
            pass
        assert Path(path).exists()
    assert not Path(lock_path(out)).exists()

    # Released on failure too.
    with pytest.raises(RuntimeError):
        with output_lock(out):
            raise RuntimeError("the replay failed")
    assert not Path(lock_path(out)).exists()

    # Held by a live process: refused, naming it.
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        Path(lock_path(out)).write_text(json.dumps({"host": socket.gethostname(), "pid": sleeper.pid,
                                                    "started": "2024-01-01T00:00:00+00:00",
                                                    "args": ["replay", "run", "B"]}))
        with pytest.raises(OutputLocked) as exc:
            with output_lock(out):
                pass
        assert f"pid {sleeper.pid}" in str(exc.value) and "replay run B" in str(exc.value)
    finally:
        sleeper.kill()
        sleeper.wait()
    # The same lock once its process is dead: stale, broken, taken.
    with output_lock(out):
        assert json.loads(Path(lock_path(out)).read_text())["pid"] == os.getpid()
    # Another host's lock is never broken (its processes cannot be seen from here).
    Path(lock_path(out)).write_text(json.dumps({"host": "elsewhere", "pid": 1, "started": "x", "args": []}))
    with pytest.raises(OutputLocked, match="on elsewhere"):
        with output_lock(out):
            pass


# --- two concurrent runs, end to end ----------------------------------------------------------------------------

@pytest.mark.spark
def test_two_concurrent_runs_on_one_output(tmp_path):
    src = tmp_path / "log"
    src.mkdir()
    shutil.copy(DATA / "bad_rows.csv", src / "bad_rows.csv")
    out = tmp_path / "out"
    cfg = tmp_path / "job.yaml"
    cfg.write_text(yaml.safe_dump(bad_rows_cfg(src, out)))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    first = subprocess.Popen([REPLAY, "run", "--config", str(cfg), "--master", "local[1]"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not Path(lock_path(str(out))).exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # The second run is refused at once, before starting Spark, naming the holder.
        t0 = time.monotonic()
        second = subprocess.run([REPLAY, "run", "--config", str(cfg), "--master", "local[1]"], env=env,
                                capture_output=True, text=True, timeout=300)
        assert second.returncode == 1, second.stderr
        assert f"locked by pid {first.pid}" in second.stderr and "another replay of this job" in second.stderr
        assert time.monotonic() - t0 < 30
        stdout, stderr = first.communicate(timeout=900)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, stderr
    # The outputs are those of the one run: its summary line, every dataset, nothing left over.
    assert "rows read 34," in stdout and "quarantined rows 20," in stdout
    assert sorted(os.listdir(out)) == ["counts", "late_events", "quarantine", "watermarks", "windows"]
    counts = pq.read_table(out / "counts").to_pylist()
    assert counts == [{"rows_read": 34, "rows_in_windows": 10, "late_rows": 1, "quarantined_rows": 20,
                       "skipped_rows": 3, "filtered_rows": 0}]




# --- the lock file is never seen without its holder -------------------------------------------------------------

def test_the_lock_file_appears_with_its_content(tmp_path):
    """A reader racing the creator sees no lock or the whole lock, never an empty file (which it would report
    as 'an unreadable lock' instead of naming the holder)."""
    fs = LocalFs()
    path = str(tmp_path / "_lock")
    text = json.dumps({"pid": 1, "args": ["x" * 4000]})
    seen: list[str] = []
    stop = threading.Event()

    def read_while_running():
        while not stop.is_set():
            raw = fs.read_text(path)
            if raw is not None:
                seen.append(raw)

    reader = threading.Thread(target=read_while_running)
    reader.start()
    try:
        for _ in range(2000):
            assert fs.create_exclusive(path, text)
            assert not fs.create_exclusive(path, "another")
            fs.delete(path)
    finally:
        stop.set()
        reader.join()
    assert seen and set(seen) == {text}
    assert os.listdir(tmp_path) == []  # no drafts left behind


class _SlowHadoopLock:
    """A Hadoop-like file system whose lock is created, then written: empty for the first reads."""

    def __init__(self, text: str, empty_reads: int):
        self.text, self.empty_reads = text, empty_reads

    def read_text(self, path):
        if self.empty_reads:
            self.empty_reads -= 1
            return ""
        return self.text


def test_a_lock_still_being_written_is_read_again_before_it_is_called_unreadable():
    holder = {"host": "elsewhere", "pid": 7, "started": "x", "args": ["replay", "run"]}
    raw, read = read_holder(_SlowHadoopLock(json.dumps(holder), empty_reads=3), "_lock")
    assert read == holder
    raw, read = read_holder(_SlowHadoopLock("", empty_reads=10 ** 9), "_lock", patience_s=0.2)
    assert (raw, read) == ("", None)
