"""orchestration/failures.py: a failed task's cause in one line, first, kept for the runs page, with no traceback."""
from __future__ import annotations

import logging

import pytest

from event_replay.orchestration.failures import FAILURE_KEY, Failed, cause_of, fail


def test_a_failed_job_is_named_by_its_own_last_words():
    """The cause of a failed Spark job, read off its output: the CLI's `replay:` line, else the exception."""
    out = ["26/11/25 WARN Utils: x", "Traceback (most recent call last):", '  File "x.py", line 1',
           "event_replay.io.lock.OutputLocked: /out is held by pid 7 on vm", "replay: failed"]
    assert cause_of(out, "?") == "OutputLocked: /out is held by pid 7 on vm"
    assert cause_of(["replay: config error: key 'window.size': must be > 0"], "?") == \
        "replay: config error: key 'window.size': must be > 0"
    assert cause_of(["nothing useful"], "spark-submit exited with 1") == "spark-submit exited with 1"
    # What the run said as it went is no cause: the exception after it is.
    progress = ["replay: 2024-01-02 continues the carried state of 2024-01-01",
                "replay: 2024-01-02..2024-01-03 replayed as one span in 9.1 s (2 partitions, rows read 40)",
                "replay: partition 1 of 2 2024-01-02: rows read 20, firings 3, late rows 0, committed in 0.2 s"]
    assert cause_of(progress + out[1:], "?") == "OutputLocked: /out is held by pid 7 on vm"
    assert cause_of(["replay: 2024-01-01 starts a new history"], "spark-submit exited with 1") == \
        "spark-submit exited with 1"


class _TI:
    def __init__(self):
        self.pushed = {}

    def xcom_push(self, key, value):
        self.pushed[key] = value


def test_fail_logs_one_line_keeps_it_and_exits_without_a_traceback(caplog):
    ti = _TI()
    with caplog.at_level(logging.ERROR):
        exc = fail("Refused: Last day: 2024-01-01 is before the first day 2024-01-03", ti, code=2)
    assert isinstance(exc, SystemExit) and exc.code == 2 and isinstance(exc, Failed)
    assert str(exc) == ti.pushed[FAILURE_KEY] == "Refused: Last day: 2024-01-01 is before the first day 2024-01-03"
    assert [r.getMessage() for r in caplog.records] == [str(exc)]
    with pytest.raises(SystemExit):
        raise exc


# What a failed range job prints (spark-submit's output, as the hook passes it on: stripped): Spark's log lines, a
# Java stack trace Spark logs, the Python traceback with Py4J's Java trace inside, a cancel's KeyboardInterrupt
# chained to it, and the job's own last line (exits.py).
JOB_OUTPUT = """26/11/27 20:48:13 WARN NativeCodeLoader: Unable to load native-hadoop library
replay: 2024-01-01 (1 of 3): rows read 400, firings 12, late rows 3, committed in 1.2 s
26/11/27 20:48:20 ERROR Executor: Exception in task 0.0 in stage 3.0 (TID 7)
java.io.FileNotFoundException: File file:/log/dt=2024-01-02/part-0.parquet does not exist
at org.apache.hadoop.fs.RawLocalFileSystem.deprecatedGetFileStatus(RawLocalFileSystem.java:915)
at org.apache.spark.sql.execution.datasources.FileScanRDD$$anon$1.hasNext(FileScanRDD.scala:131)
Caused by: java.lang.RuntimeException: gone
... 23 more
Traceback (most recent call last):
File "/srv/src/event_replay/range_replay.py", line 88, in run_range
spark.createDataFrame(rows).write.parquet(path)
File "/venv/lib/python3.11/site-packages/py4j/java_gateway.py", line 1322, in __call__
return_value = get_return_value(
^^^^^^^^^^^^^^^^^
py4j.protocol.Py4JJavaError: An error occurred while calling o58.parquet.
: org.apache.spark.SparkException: Job aborted due to stage failure: FileNotFoundException
at org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2898)
at java.base/java.lang.Thread.run(Thread.java:840)

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
File "/srv/src/event_replay/exits.py", line 22, in guarded
return run()
KeyboardInterrupt
26/11/27 20:48:21 WARN SparkContext: stopping
replay: failed: org.apache.spark.SparkException: Job aborted due to stage failure: FileNotFoundException (traceback \
in /tmp/replay-traces/replay-x.log; REPLAY_DEBUG=1 prints it)""".splitlines()


def _shown(lines, tail) -> list[str]:
    """The task log's lines for a job's output, as the hook (submit_hook.py) logs them line by line."""
    return [shown for line in lines for shown in tail.show(line)] + tail.end()


def test_the_task_log_shows_the_job_without_its_tracebacks(tmp_path, monkeypatch):
    """Each run of traceback lines is one line naming the trace file, which keeps them all; the job's own lines and
    its last line stay, and the cause is that last line; REPLAY_DEBUG shows everything."""
    from event_replay.orchestration.failures import tail_buffer

    monkeypatch.setenv("REPLAY_TRACE_DIR", str(tmp_path))
    monkeypatch.delenv("REPLAY_DEBUG", raising=False)
    tail = tail_buffer()
    shown = _shown(JOB_OUTPUT, tail)
    trace = tail.traces.path
    assert shown == [JOB_OUTPUT[0], JOB_OUTPUT[1], JOB_OUTPUT[2],
                     f"({len(JOB_OUTPUT[3:-2])} lines of a traceback in {trace}; REPLAY_DEBUG=1 logs them here)",
                     JOB_OUTPUT[-2], JOB_OUTPUT[-1]], shown
    kept = trace.read_text().splitlines()
    assert [ln for ln in kept if ln] == [ln for ln in JOB_OUTPUT[3:-2] if ln]
    assert list(tail) == JOB_OUTPUT  # the cause is read from every line
    assert cause_of(tail, "?") == JOB_OUTPUT[-1]  # it names its own trace file
    monkeypatch.setenv("REPLAY_DEBUG", "1")
    assert _shown(JOB_OUTPUT, tail_buffer()) == JOB_OUTPUT


def test_a_cause_without_a_trace_file_of_its_own_names_the_tasks(tmp_path, monkeypatch):
    """A job that died without its own last line: the cause is the Java exception Py4J carried (not Py4J's "An
    error occurred while calling"), with the task's trace file."""
    from event_replay.orchestration.failures import tail_buffer

    monkeypatch.setenv("REPLAY_TRACE_DIR", str(tmp_path))
    monkeypatch.delenv("REPLAY_DEBUG", raising=False)
    tail = tail_buffer()
    lines = JOB_OUTPUT[:-2]
    shown = _shown(lines, tail)
    assert not any(ln.startswith(("at ", "Traceback", "File ")) for ln in shown), shown
    assert cause_of(tail, "?") == ("SparkException: Job aborted due to stage failure: FileNotFoundException "
                                   f"(traceback in {tail.traces.path})")
