"""A fatal JVM error ends the process with exit 1 and one line, never a hang (src/event_replay/fatal.py).

Each case runs a small driver in its own process, as `replay` runs: a session from build_session, the work under
exits.guarded. The failures are real: a heap really exhausted, Spark's scheduler thread really stopped, the JVM
really killed. Without the watchdog the second and third would wait forever (the timeout here fails the test).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

DRIVER = textwrap.dedent("""
    import os, signal, sys
    from event_replay.exits import guarded
    from event_replay.spark import build_session

    def run():
        spark = build_session(master="local[1]", conf={{"spark.driver.memory": "512m"}})
        {action}
        return 0

    sys.exit(guarded("replay", run))
""")

# Rows far larger than a 512 MB heap, collected into the driver JVM (a result being gathered: Spark's threads).
EXHAUST_HEAP = ('spark.range(0, 4_000_000, numPartitions=8).selectExpr("repeat(\'x\', 400) AS s")'
                '._jdf.collectAsList()')
# Spark's scheduler thread ends without stopping the context: every job after it waits forever.
# The thread is interrupted while it waits for an event (as it is between jobs): interrupted in the middle of one, it
# may instead hand the error to the context, which then stops (a different failure, not this test's).
STOP_SCHEDULER = "\n    ".join([
    'import time',
    't = next(t for t in spark._jvm.java.lang.Thread.getAllStackTraces().keySet().toArray() '
    'if t.getName() == "dag-scheduler-event-loop")',
    'waiting = 0',
    'while waiting < 5: time.sleep(0.05); waiting = waiting + 1 if str(t.getState()) == "WAITING" else 0',
    't.interrupt(); spark.range(10).count()'])
KILL_JVM = ('os.kill(spark._jvm.java.lang.ProcessHandle.current().pid(), signal.SIGKILL); '
            'spark.range(10).count()')


def run_driver(action: str, timeout: float = 240) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", DRIVER.format(action=action)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    return proc, time.monotonic() - t0


def replay_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("replay:")]


def test_out_of_memory_exits_1_with_one_line_naming_the_setting():
    proc, _ = run_driver(EXHAUST_HEAP)
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = replay_lines(proc.stderr)
    assert len(lines) == 1, proc.stderr[-3000:]
    assert "out of memory" in lines[0] and "spark.driver.memory=512m" in lines[0]
    assert "raise spark.driver.memory" in lines[0]
    assert "Traceback" not in proc.stderr


def test_a_dead_scheduler_thread_ends_the_run_instead_of_hanging():
    proc, _ = run_driver(STOP_SCHEDULER)
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = replay_lines(proc.stderr)
    assert lines == [lines[0]] and "scheduler thread died" in lines[0], proc.stderr[-3000:]


def test_a_killed_jvm_gives_one_line_not_a_py4j_traceback():
    proc, _ = run_driver(KILL_JVM)
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = replay_lines(proc.stderr)
    # The exit code once the process is gone; "lost the connection" if it is slow to go (a loaded machine).
    assert len(lines) == 1 and ("JVM exited with code -9" in lines[0] or "lost the connection" in lines[0]), \
        proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("given, expected", [
    (None, "-XX:+ExitOnOutOfMemoryError"),
    ("-Dx=1", "-Dx=1 -XX:+ExitOnOutOfMemoryError"),
    ("-XX:+ExitOnOutOfMemoryError -Dx=1", "-XX:+ExitOnOutOfMemoryError -Dx=1"),
])
def test_exit_on_oom_is_added_to_the_deployments_options(given, expected):
    from event_replay.fatal import with_exit_on_oom

    assert with_exit_on_oom(given) == expected
