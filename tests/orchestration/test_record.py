"""The run record (orchestration/record.py) and `replay verify`: what a run read, and whether a rerun reads the same."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from event_replay.orchestration.committed import config_fingerprint
from event_replay.orchestration.record import (find_run, input_fingerprint, new_record, project_version,
                                               read_record, verify, verify_line, write_record)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def run(tmp_path):
    """A source of two days (one with a hidden file Spark skips), a plan over three (the third missing), and the
    record the replay task writes for it."""
    src = tmp_path / "log"
    for day, files in (("2024-01-01", ["part-0.parquet", "part-1.parquet"]), ("2024-01-02", ["part-0.parquet"])):
        (src / f"dt={day}").mkdir(parents=True)
        for f in files:
            (src / f"dt={day}" / f).write_bytes(b"x" * 100)
    (src / "dt=2024-01-01" / "_SUCCESS").write_bytes(b"")
    (src / "dt=2024-01-01" / ".part-0.parquet.crc").write_bytes(b"c")
    job = tmp_path / "out" / "_airflow" / "manual__1" / "job.yaml"
    job.parent.mkdir(parents=True)
    job.write_text("source: {path: log}\n")
    planned = {"plan": {"runs": [{"partition": d} for d in ("2024-01-01", "2024-01-02", "2024-01-03")],
                        "missing": ["2024-01-03"]},
               "source_path": str(src), "config_path": str(job), "config_file": "jobs/configs/x.yaml",
               "config_raw": {"source": {"path": str(src)}}, "output_path": str(tmp_path / "out"),
               "start": "2024-01-01", "end": "2024-01-03"}
    folder = job.parent
    write_record(folder, new_record(planned, "event_time_backfill", "manual__1"))
    return src, folder


def test_the_record_names_version_config_input_and_spark(run):
    src, folder = run
    rec = read_record(folder)
    assert rec["run_id"] == "manual__1" and rec["dag_id"] == "event_time_backfill"
    assert rec["config"] == {"file": "jobs/configs/x.yaml", "effective": str(folder / "job.yaml"),
                             "resolved": {"source": {"path": "log"}},
                             "fingerprint": config_fingerprint({"source": {"path": str(src)}})}
    # What tells an identical run (committed.py): the output, and each partition's place in the plan.
    assert rec["request"]["output"] == str(folder.parent.parent)
    assert rec["request"]["runs"] == [{"partition": d} for d in ("2024-01-01", "2024-01-02", "2024-01-03")]
    assert rec["project"]["version"] == "0.1.0" and rec["spark"]["version"].startswith("4.")
    parts = rec["input"]["partitions"]
    assert [f["path"] for f in parts["2024-01-01"]["files"]] == ["part-0.parquet", "part-1.parquet"]  # no _, no .
    assert parts["2024-01-03"] == {"folder": "dt=2024-01-03", "files": None}
    assert all(f["size"] == 100 and f["mtime_ns"] > 0 for f in parts["2024-01-02"]["files"])


def test_project_version_has_the_commit_of_a_checkout():
    v = project_version()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        assert v["commit"] == head.stdout.strip() and isinstance(v["dirty"], bool)


def test_verify_says_whether_a_rerun_reads_the_same_input(run):
    src, folder = run
    v = verify(read_record(folder))
    assert v.same and (v.partitions, v.files, v.bytes) == (3, 3, 300)
    assert verify_line(v).endswith("a rerun reads the same input")
    (src / "dt=2024-01-01" / "part-1.parquet").write_bytes(b"y" * 120)  # rewritten
    (src / "dt=2024-01-02" / "part-9.parquet").write_bytes(b"z")  # added
    (src / "dt=2024-01-03").mkdir()  # the missing day arrived
    (src / "dt=2024-01-03" / "part-0.parquet").write_bytes(b"z")
    v = verify(read_record(folder))
    assert not v.same
    assert [d.split(":")[0] for d in v.differences] == ["dt=2024-01-01/part-1.parquet", "dt=2024-01-02/part-9.parquet",
                                                        "dt=2024-01-03"]
    assert "100 -> 120 bytes" in v.differences[0] and v.differences[1].endswith("added (1 bytes)")
    assert "a rerun would read other input" in verify_line(v)
    os.remove(src / "dt=2024-01-02" / "part-0.parquet")
    assert "dt=2024-01-02/part-0.parquet: removed" in verify(read_record(folder)).differences


def test_a_remote_source_is_recorded_as_not_listed():
    fp = input_fingerprint("s3a://bucket/log", ["2024-01-01"])
    assert fp["listed"] is False
    v = verify({"run_id": "r", "input": fp})
    assert not v.same and v.unchecked and "cannot check" in verify_line(v)


def test_replay_verify_command(run, tmp_path):
    src, folder = run
    replay = [sys.executable, "-m", "event_replay.cli", "verify"]
    ok = subprocess.run([*replay, str(folder)], capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and "a rerun reads the same input" in ok.stdout, ok.stdout + ok.stderr
    by_file = subprocess.run([*replay, str(folder / "run.json")], capture_output=True, text=True, timeout=300)
    assert by_file.returncode == 0
    (src / "dt=2024-01-02" / "part-0.parquet").write_bytes(b"changed")
    changed = subprocess.run([*replay, str(folder)], capture_output=True, text=True, timeout=300)
    assert changed.returncode == 1 and "dt=2024-01-02/part-0.parquet: changed" in changed.stdout, changed.stdout
    none = subprocess.run([*replay, str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=300)
    assert none.returncode == 2 and "no run record" in none.stderr
    assert find_run("manual:1", str(tmp_path / "out")) is None
    (tmp_path / "out" / "_airflow" / "manual_1").mkdir()
    write_record(tmp_path / "out" / "_airflow" / "manual_1", json.loads((folder / "run.json").read_text()))
    assert find_run("manual:1", str(tmp_path / "out")) == tmp_path / "out" / "_airflow" / "manual_1"
