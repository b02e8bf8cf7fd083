"""orchestration/cancel.py without Spark: a SIGTERM inside `cancellable` stops the process with exit 130 and leaves
the output consistent under its lock (an interrupted commit rolled forward, the staging removed, the lock
released); on_kill's side stops a driver below spark-submit with SIGTERM. A real replay and a real DAG run are
cancelled in tests/test_airflow_cancel.py."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

SCRIPT = r'''
import json, sys, time
from pathlib import Path
from event_replay.exits import guarded
from event_replay.io.lock import output_lock
from event_replay.orchestration.cancel import cancellable

out = Path(sys.argv[1])

def run():
    with output_lock(str(out)), cancellable(str(out)):
        committing, orphan = out / "_staging-commit", out / "_staging-orphan"
        (committing / "windows" / "dt=2024-01-02").mkdir(parents=True)
        (committing / "windows" / "dt=2024-01-02" / "part-0.parquet").write_text("new")
        (orphan / "windows" / "dt=2024-01-03").mkdir(parents=True)  # a span not committed yet
        # a commit stopped after its journal: the move it names is not applied yet
        (out / "_commit.json").write_text(json.dumps({"format": 1, "staging": str(committing), "moves": [
            [str(committing / "windows" / "dt=2024-01-02"), str(out / "windows" / "dt=2024-01-02")]]}))
        (out / "ready").touch()
        time.sleep(600)
    return 0

sys.exit(guarded("replay", run))
'''


def test_sigterm_stops_the_job_and_leaves_the_output_consistent(tmp_path):
    out = tmp_path / "out"
    (out / "windows" / "dt=2024-01-01").mkdir(parents=True)  # committed by an earlier run: kept
    (out / "windows" / "dt=2024-01-01" / "part-0.parquet").write_text("old")
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 300
    while not (out / "ready").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert (out / "_lock").exists(), proc.communicate()[1] if proc.poll() is not None else "not ready"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "SIGTERM: stopping" in err and "keeps every committed partition" in err, err
    assert (out / "windows" / "dt=2024-01-01" / "part-0.parquet").read_text() == "old"
    assert (out / "windows" / "dt=2024-01-02" / "part-0.parquet").read_text() == "new"  # rolled forward
    assert sorted(p.name for p in out.iterdir()) == ["ready", "windows"], sorted(p.name for p in out.iterdir())


def test_stop_spark_submit_sends_sigterm_to_the_driver_below_it(tmp_path):
    """spark-submit (here a shell) runs the application's driver as a child; SIGTERM reaches the driver, whose exit
    ends spark-submit within the grace."""
    from event_replay.orchestration.cancel import stop_spark_submit, write_cancel_record

    app = tmp_path / "replay_job.py"
    app.write_text("import signal, sys, time\n"
                   "signal.signal(signal.SIGTERM, lambda *a: sys.exit(130))\n"
                   "open(sys.argv[1], 'w').close()\n"
                   "time.sleep(600)\n")
    ready = tmp_path / "ready"
    submit = subprocess.Popen(["/bin/sh", "-c", f"{sys.executable} {app} {ready}; exit $?"])
    deadline = time.monotonic() + 120
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    job = psutil.Process(submit.pid)
    assert stop_spark_submit(job, str(app), grace=30)
    assert submit.wait() == 130  # left to its starter to reap
    assert stop_spark_submit(job, str(app)) is True  # already ended: nothing to do
    record = write_cancel_record(tmp_path / "run", 2, 3, ["2024-01-02"])
    assert json.loads(record.read_text())["partitions"] == ["2024-01-02"]


def test_outside_the_main_thread_it_changes_nothing(tmp_path):
    import threading

    from event_replay.orchestration.cancel import cancellable

    before = signal.getsignal(signal.SIGTERM)
    seen = []

    def body():
        with cancellable(str(tmp_path)):
            seen.append(signal.getsignal(signal.SIGTERM))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [before] and signal.getsignal(signal.SIGTERM) == before
    assert Path(tmp_path).exists()
