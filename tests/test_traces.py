"""traces.py on its own: REPLAY_DEBUG's values, where a trace file goes and how it is named, the one line of an
exception, and TraceFilter's sorting of a job's output lines into the log's and the trace file's. A command's failure
line (exits.py): test_exits.py; a whole failed job's output through the task log: orchestration/test_failures.py."""
from __future__ import annotations

import os
import re
import types

import pytest

from event_replay import traces
from event_replay.traces import TraceFilter, debugging, first_line, trace_file, write_exception


@pytest.fixture
def trace_dir(tmp_path, monkeypatch):
    folder = tmp_path / "traces"
    monkeypatch.setenv("REPLAY_TRACE_DIR", str(folder))
    monkeypatch.delenv("REPLAY_DEBUG", raising=False)
    return folder


@pytest.mark.parametrize("value, on", [(None, False), ("", False), ("0", False), ("1", True), ("yes", True),
                                       ("false", True)])  # anything but "" or "0"
def test_replay_debug_is_on_for_anything_but_empty_or_zero(monkeypatch, value, on):
    if value is None:
        monkeypatch.delenv("REPLAY_DEBUG", raising=False)
    else:
        monkeypatch.setenv("REPLAY_DEBUG", value)
    assert debugging() is on


def test_a_trace_file_is_named_for_its_safe_name_time_and_process(trace_dir):
    path = trace_file("replay range/2024-01-01: x")
    assert path.parent == trace_dir and path.read_text() == ""  # the folder made, the file reserved (empty)
    assert re.fullmatch(rf"replay_range_2024-01-01_x-\d{{8}}T\d{{6}}-{os.getpid()}\.log", path.name), \
        path.name
    assert trace_file("/// ").name.startswith("replay-")  # nothing safe left: "replay"


def test_without_replay_trace_dir_traces_go_to_the_temp_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(traces.tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("REPLAY_TRACE_DIR", raising=False)
    assert trace_file("tune").parent == tmp_path / "replay-traces"
    monkeypatch.setenv("REPLAY_TRACE_DIR", "")  # set but empty: the same
    assert trace_file("tune").parent == tmp_path / "replay-traces"


def _chained() -> BaseException:
    try:
        try:
            raise KeyError("inner")
        except KeyError as e:
            raise RuntimeError("outer failed") from e
    except RuntimeError as e:
        return e


def test_write_exception_keeps_the_whole_chained_traceback(trace_dir):
    path = write_exception("replay", _chained())
    text = path.read_text()
    assert path.parent == trace_dir and path.name.startswith("replay-")
    assert text.startswith("Traceback (most recent call last):")
    assert "KeyError: 'inner'" in text and "direct cause of the following exception" in text
    assert text.rstrip().endswith("RuntimeError: outer failed")


@pytest.mark.parametrize("exc, line", [
    (ValueError("bad value"), "ValueError: bad value"),
    (ValueError("\n  first words  \nmore"), "ValueError: first words"),
    (RuntimeError(), "RuntimeError"),
    (Exception("An error occurred while calling o58.parquet.\n: java.io.IOException: disk gone\n\tat x.Y(Y.java:1)"),
     "java.io.IOException: disk gone"),
    # A real task's Py4J error (a corrupt Parquet page): the wrapper says nothing, its first cause names the file.
    (Exception("An error occurred while calling o579.getResult.\n: org.apache.spark.SparkException: Exception "
               "thrown in awaitResult: \n\tat org.apache.spark.util.SparkThreadUtils$.awaitResult(S.scala:53)\n"
               "Caused by: org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] Encountered error while "
               "reading file file:///log/dt=2024-01-01/part-00000.parquet.  SQLSTATE: KD001\n\tat a.B(B.java:1)\n"
               "Caused by: java.io.IOException: can not read class PageHeader"),
     "org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] Encountered error while reading file "
     "file:///log/dt=2024-01-01/part-00000.parquet.  SQLSTATE: KD001"),
    (Exception("An error occurred while calling o1.x.\n: java.util.concurrent.ExecutionException\n"
               "Caused by: java.lang.IllegalStateException: gone"), "java.lang.IllegalStateException: gone"),
])
def test_first_line_of_an_exception(exc, line):
    assert first_line(exc) == line


def test_output_without_traces_passes_unchanged_and_makes_no_file(trace_dir):
    lines = ["26/11/27 WARN Something: slow", "", "ValueError: a log line that names an error", "replay: done\n"]
    f = TraceFilter("replay")
    assert list(f.feed(lines)) == ["26/11/27 WARN Something: slow", "", "ValueError: a log line that names an error",
                                   "replay: done"]
    assert f.path is None and f.lines == 0 and not trace_dir.exists()


def test_each_run_of_trace_lines_is_one_log_line_and_the_file_keeps_them_all(trace_dir):
    java = ["java.lang.IllegalStateException: broken", "at org.x.A.run(A.java:12)",
            "Suppressed: java.io.IOException: close", "at org.x.B.close(B.java:3)", "... 4 common frames omitted"]
    python = ["Traceback (most recent call last):", 'File "/srv/job.py", line 8, in main', "run()",
              "ZeroDivisionError: division by zero"]
    f = TraceFilter("replay")
    shown = list(f.feed(["start", *java, "middle", *python, "RuntimeError: the job's last words"]))
    assert shown == ["start", f"(5 lines of a traceback in {f.path}; REPLAY_DEBUG=1 logs them here)", "middle",
                     f"(4 lines of a traceback in {f.path}; REPLAY_DEBUG=1 logs them here)",
                     "RuntimeError: the job's last words"]
    assert f.lines == 9 and f.path.parent == trace_dir
    assert f.path.read_text() == "\n".join(java) + "\n\n" + "\n".join(python) + "\n\n"  # a blank line after each run


def test_a_trace_at_the_end_of_the_output_is_summed_up_at_the_end(trace_dir):
    f = TraceFilter("replay")
    shown = list(f.feed(["start", "java.lang.RuntimeException: x", "at a.B.c(B.java:1)"]))
    assert shown == ["start", f"(2 lines of a traceback in {f.path}; REPLAY_DEBUG=1 logs them here)"]


def test_the_python_exception_line_ends_its_traceback_and_a_py4j_java_line_continues_it(trace_dir):
    f = TraceFilter("replay")
    lines = ["Traceback (most recent call last):", 'File "/srv/job.py", line 3, in run',
             "py4j.protocol.Py4JJavaError: An error occurred while calling o1.save.",
             ": org.apache.spark.SparkException: aborted", "at org.apache.spark.X.y(X.scala:9)",
             "26/11/27 INFO stopping"]
    shown = list(f.feed(lines))
    assert shown == [f"(5 lines of a traceback in {f.path}; REPLAY_DEBUG=1 logs them here)", "26/11/27 INFO stopping"]


def test_two_trace_files_of_one_name_in_one_second_are_two_files(trace_dir, monkeypatch):
    monkeypatch.setattr(traces, "time", types.SimpleNamespace(gmtime=lambda: None,
                                                              strftime=lambda fmt, t: "20260101T000000"))
    first = write_exception("replay", ValueError("first"))
    second = write_exception("replay", ValueError("second"))
    assert first != second and "ValueError: first" in first.read_text()


def test_a_python_traceback_ends_at_any_exception_line(trace_dir):
    f = TraceFilter("replay")
    lines = ["Traceback (most recent call last):", 'File "/srv/job.py", line 3, in run', "raise Stale('x')",
             "job.Stale: state from another config", "replay: failed: job.Stale: state from another config"]
    assert list(f.feed(lines))[-1] == lines[-1]
    assert f.lines == 4


def test_a_traceback_of_frames_without_source_carets_and_a_bare_raise_ends_at_its_exception(trace_dir):
    # Real lines of Python 3.11 (stripped): a frame with no source (<frozen>), carets, a bare `raise` re-raising.
    lines = ["Traceback (most recent call last):", 'File "<frozen runpy>", line 198, in _run_module_as_main',
             'File "/srv/job.py", line 9, in <module>', "main()", 'File "/srv/job.py", line 5, in main',
             "raise", 'File "/srv/job.py", line 3, in check', "x = state[key]", "~~~~~^^^^^",
             "KeyError: 'p0'", "During handling of the above exception, another exception occurred:", "",
             "Traceback (most recent call last):", 'File "<string>", line 1, in <module>',
             "job.Stale", "26/11/27 INFO stopping"]
    f = TraceFilter("replay")
    assert list(f.feed(lines)) == [f"(15 lines of a {traces.TRACEBACK_IN}{f.path}; REPLAY_DEBUG=1 logs them here)",
                                   "26/11/27 INFO stopping"]


def test_a_real_traceback_of_an_exception_not_named_error_is_one_line(trace_dir):
    import subprocess
    import sys

    code = "class Stale(Exception): pass\ndef run():\n    raise Stale('state from another config')\nrun()"
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stderr.splitlines()
    f = TraceFilter("replay")
    shown = list(f.feed([ln.strip() for ln in err] + ["replay: failed"]))
    assert shown == [f"({len(err)} lines of a {traces.TRACEBACK_IN}{f.path}; REPLAY_DEBUG=1 logs them here)",
                     "replay: failed"]
