"""A fatal JVM error ends the process with exit 1 and one line, never a hang (src/event_replay/fatal.py).

Each case runs a small driver in its own process, as `replay` runs: a session from build_session, the work under
exits.guarded. The failures are real: a heap really exhausted, Spark's scheduler thread really stopped, the context
really stopped by Spark while a job waits, a stop that never ends, the JVM really killed. Without the watchdog all
but the first would wait forever (the timeout here fails the test).
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
# Spark's scheduler thread ends without stopping the context: the program's next job would wait forever, and the
# watchdog must end the run while the program is still at its own work (a sleep here). The thread is interrupted
# while it waits for an event (as it is between jobs): interrupted in the middle of one, it may instead hand the
# error to the context, which then stops (a different failure, not this test's). No job is posted after it: posted
# once the thread is gone, Spark's event loop stops the context too, and which of the watchdog's two lines comes
# then depends on timing (STRANDED_JOB tests the other line).
STOP_SCHEDULER = "\n    ".join([
    'import time',
    't = next(t for t in spark._jvm.java.lang.Thread.getAllStackTraces().keySet().toArray() '
    'if t.getName() == "dag-scheduler-event-loop")',
    'waiting = 0',
    'while waiting < 5: time.sleep(0.05); waiting = waiting + 1 if str(t.getState()) == "WAITING" else 0',
    't.interrupt()',
    'while t.isAlive(): time.sleep(0.05)',
    'time.sleep(200)  # the program at its own work: it would return 0 after it if nothing ended the run'])
# A job of one task whose accumulator update Spark's scheduler thread is merging (it waits for the driver's Python
# side, HeldMerge.addInPlace, to answer) when this ends: the program defines HeldMerge before it.
HELD_UPDATE = "\n    ".join([
    'held = spark.sparkContext.accumulator(0, HeldMerge())',
    'threading.Thread(target=lambda: spark.sparkContext.parallelize([1], 1).foreach(lambda _: held.add(1)), '
    'daemon=True).start()',
    't = next(t for t in spark._jvm.java.lang.Thread.getAllStackTraces().keySet().toArray() '
    'if t.getName() == "dag-scheduler-event-loop")',
    'while not any("PythonAccumulatorV2" in str(f) for f in t.getStackTrace()): time.sleep(0.1)'])
# Spark stops the context on its own (stopInNewThread: what its scheduler does when an event fails) while the
# scheduler thread is in the middle of an event (merging a task's accumulator update: it waits for the driver's
# Python side, which answers once the program's next job is queued). The stop ends the scheduler thread before that
# job's turn and fails only the jobs that started: the program waits for its job forever.
STRANDED_JOB = "\n    ".join([
    'import threading, time',
    'from pyspark.accumulators import AccumulatorParam',
    'driver = os.getpid()',
    'class HeldMerge(AccumulatorParam):',
    '    def zero(self, value): return 0',
    '    def addInPlace(self, a, b):',
    '        if os.getpid() == driver:  # the driver answering the scheduler thread\'s merge',
    '            from pyspark import SparkContext',
    '            jsc = SparkContext._active_spark_context._jsc.sc()',
    '            while jsc.dagScheduler().numTotalJobs() < 2: time.sleep(0.1)  # job 1, the program\'s, is queued',
    '            time.sleep(1); jsc.stopInNewThread(); threading.Event().wait()',
    '        return a + b',
    HELD_UPDATE,
    'spark.sparkContext.parallelize([1], 1).count()'])
# The program stops its own session, and the stop takes longer than the watchdog's grace for a context that stops
# on its own: a listener of the program is slow to see the application end (the stop waits for the listeners).
SLOW_OWN_STOP = "\n    ".join([
    'import time',
    'from pyspark.java_gateway import ensure_callback_server_started',
    'class SlowToSeeTheEnd:',
    '    def onApplicationEnd(self, end): time.sleep({seconds})',
    '    def __getattr__(self, name):  # every other event of SparkListenerInterface: nothing to do',
    '        if not name.startswith("on"): raise AttributeError(name)',
    '        return lambda *_: None',
    '    class Java: implements = ["org.apache.spark.scheduler.SparkListenerInterface"]',
    'ensure_callback_server_started(spark.sparkContext._gateway)',
    'spark._jsc.sc().addSparkListener(SlowToSeeTheEnd())',
    'spark.range(10).count(); spark.stop()'])
# The program stops its session and the stop never ends (a listener that never returns from the application's end:
# the stop waits for the listeners). The bound for a stop the program asked for is 5 minutes; a few seconds here
# keep the test short (SLOW_OWN_STOP shows a stop longer than the other bound is still left alone).
STALLED_OWN_STOP = "\n    ".join([
    'import event_replay.fatal as fatal',
    'fatal._ASKED_STOP_BOUND_S = 4',
    SLOW_OWN_STOP.format(seconds=3600)])
# Spark stops the context on its own (stopInNewThread, as on a failed scheduler event) while the scheduler thread
# waits for the driver's Python side to merge an accumulator update, which never answers; the program then stops
# its session itself (as `replay run` does on its job's error): the JVM's part returns at once (already stopped), the
# Python part waits for the accumulator server, whose handler never returns. The watchdog must still end the run
# though the program is in a stop it asked for (it used to stop watching: the program had asked). The program asks
# once the watchdog has seen Spark's stop (so the line does not depend on which stop it saw first), or 20 s after
# Spark's stop whatever it saw, well within the 30 s grace: a watchdog that never says it saw the stop still meets
# the program's stop.
STALLED_STOP_AFTER_SPARKS = "\n    ".join([
    'import threading, time',
    'import event_replay.fatal as fatal',
    'from pyspark.accumulators import AccumulatorParam',
    'driver = os.getpid()',
    'class HeldMerge(AccumulatorParam):',
    '    def zero(self, value): return 0',
    '    def addInPlace(self, a, b):',
    '        if os.getpid() == driver: threading.Event().wait()  # the driver\'s merge never returns',
    '        return a + b',
    HELD_UPDATE,
    'spark._jsc.sc().stopInNewThread()',
    'asked_at = time.monotonic() + 20',
    'while fatal._watched.get("stop_seen") is None and time.monotonic() < asked_at: time.sleep(0.05)',
    'spark.stop()'])
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


def test_a_context_stopping_on_its_own_ends_the_run_waiting_for_it():
    proc, _ = run_driver(STRANDED_JOB)
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = replay_lines(proc.stderr)
    assert lines == [lines[0]] and "context stopped on its own" in lines[0], proc.stderr[-3000:]


def test_a_stop_the_program_asked_for_may_take_longer_than_the_grace():
    from event_replay.fatal import _UNASKED_STOP_GRACE_S

    proc, _ = run_driver(SLOW_OWN_STOP.format(seconds=_UNASKED_STOP_GRACE_S + 10))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert replay_lines(proc.stderr) == [], proc.stderr[-3000:]


def test_a_stop_the_program_asked_for_that_stalls_ends_the_run():
    proc, _ = run_driver(STALLED_OWN_STOP)
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = replay_lines(proc.stderr)
    assert lines == ["replay: Spark's context did not finish stopping in 4 s (its error, if any, is above): the run "
                     "cannot finish"], proc.stderr[-3000:]


def test_the_programs_stop_stalling_after_spark_stopped_the_context_ends_the_run():
    proc, _ = run_driver(STALLED_STOP_AFTER_SPARKS)
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = replay_lines(proc.stderr)
    assert lines == [lines[0]] and "context stopped on its own" in lines[0], proc.stderr[-3000:]


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
