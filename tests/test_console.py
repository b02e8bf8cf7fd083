"""console.py in real processes: a failing command's stderr is its context line and its failure line, whatever a
child process (as the driver JVM does) wrote to the inherited fd 2; a Ctrl-C that PySpark's handler turns into a
Py4J error reads "interrupted", exit 130; with REPLAY_DEBUG everything is shown. And `replay run` itself on a
corrupt Parquet file (a real Spark: integration, it costs a JVM start)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A "JVM": a child process inheriting fd 2 that writes what Spark writes there, then the command fails.
_FAILING = textwrap.dedent("""
    import subprocess, sys
    from event_replay.console import quiet_stderr
    from event_replay.exits import guarded

    SPARK = '''WARNING: Using incubator modules: jdk.incubator.vector
    Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties
    26/11/28 05:03:30 WARN Utils: Your hostname, vm, resolves to a loopback address
    26/11/28 05:04:03 ERROR Executor: Exception in task 0.0 in stage 1.0 (TID 1)
    org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] Encountered error while reading file x.parquet.
    \\tat org.apache.spark.sql.errors.QueryExecutionErrors$.cannotReadFilesError(QueryExecutionErrors.scala:911)
    \\tat java.base/java.lang.Thread.run(Thread.java:840)
    Caused by: java.io.IOException: can not read class org.apache.parquet.format.PageHeader
    \\t... 48 more
    '''

    def command():
        print("replay: reading x", file=sys.stderr)
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write(sys.stdin.read())"], input=SPARK,
                       text=True, check=True)
        raise RuntimeError("the read failed")

    with quiet_stderr("replay"):
        sys.exit(guarded("replay", command))
""")


def _run(script: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "REPLAY_TRACE_DIR": str(tmp_path / "traces"), "REPLAY_DEBUG": "", **env}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)


def test_a_failure_shows_its_own_lines_and_names_the_file_with_sparks(tmp_path):
    done = _run(_FAILING, tmp_path)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 3, done.stderr
    assert lines[0] == "replay: reading x"
    assert lines[1].startswith("replay: Spark's log (4 lines and 1 traceback) is in "), lines
    assert lines[2].startswith("replay: failed: RuntimeError: the read failed (traceback in "), lines
    log = Path(lines[1].split(" is in ")[1].split(";")[0]).read_text()
    assert "ERROR Executor: Exception in task" in log and "\tat java.base/java.lang.Thread.run" in log
    assert "Caused by: java.io.IOException" in log and "WARNING: Using incubator modules" in log


def test_with_replay_debug_everything_is_shown(tmp_path):
    done = _run(_FAILING, tmp_path, REPLAY_DEBUG="1")
    assert done.returncode == 1
    assert "ERROR Executor: Exception in task" in done.stderr and "\tat java.base/java.lang.Thread.run" in done.stderr
    assert "Spark's log (" not in done.stderr


_INTERRUPTED = textwrap.dedent("""
    import signal, sys, time
    from event_replay.console import quiet_stderr
    from event_replay.exits import guarded

    class Py4JError(Exception):
        pass

    def command():
        def pyspark_handler(signum, frame):  # as PySpark's: cancelAllJobs through a Py4J call that fails
            raise Py4JError("An error occurred while calling o29.sc")
        signal.signal(signal.SIGINT, pyspark_handler)
        print("ready", flush=True)
        time.sleep(30)
        return 0

    with quiet_stderr("replay"):
        sys.exit(guarded("replay", command))
""")


def test_a_ctrl_c_that_fails_inside_py4j_reads_interrupted(tmp_path):
    env = {**os.environ, "REPLAY_TRACE_DIR": str(tmp_path / "traces"), "REPLAY_DEBUG": ""}
    proc = subprocess.Popen([sys.executable, "-c", _INTERRUPTED], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout.readline() == "ready\n"
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err == "replay: interrupted\n", err


@pytest.mark.integration
def test_replay_run_on_a_corrupt_parquet_file_prints_two_lines(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = tmp_path / "log"
    source.mkdir()
    n = 2000
    table = pa.table({"split": ["p0"] * n, "offset": list(range(n)), "arrival_time": [i * 10 for i in range(n)],
                      "event_time": [i * 10 for i in range(n)], "key": [f"k{i % 7}" for i in range(n)]})
    pq.write_table(table, source / "part-0.parquet", compression="none")
    data = bytearray((source / "part-0.parquet").read_bytes())
    for i in range(8, len(data) // 2):  # the pages damaged, the footer intact: Spark fails in a task
        data[i] ^= 0x5A
    (source / "part-0.parquet").write_bytes(bytes(data))
    config = tmp_path / "job.yaml"
    config.write_text(f"source: {{path: {source}}}\nwatermark: {{max_out_of_orderness: 1s}}\n"
                      f"window: {{type: tumbling, size: 10s}}\naggregations: {{cnt: count(*)}}\n"
                      f"output: {{path: {tmp_path / 'out'}}}\n")
    t0 = time.monotonic()
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "replay"), "run", "--config", str(config)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "REPLAY_TRACE_DIR": str(tmp_path / "traces"), "REPLAY_DEBUG": ""})
    lines = done.stderr.splitlines()
    assert done.returncode in (1, 2) and len(lines) <= 2, (time.monotonic() - t0, done.stderr)
    assert lines[-1].startswith("replay: "), lines
    assert "\tat " not in done.stderr and "WARN" not in done.stderr, done.stderr


_DIES = textwrap.dedent("""
    import os, subprocess, sys
    from event_replay import fatal
    from event_replay.console import quiet_stderr

    with quiet_stderr("replay"):
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('26/11/28 05:04:03 ERROR Executor: x\\\\n')"])
        # as fatal.py's watchdog when the JVM dies: its line, the hooks, then the process ends at once
        print("replay: the driver JVM died", file=sys.stderr, flush=True)
        for fn in fatal._before_exit:
            fn()
        os._exit(1)
""")


def test_the_watchdogs_line_is_shown_before_the_process_ends(tmp_path):
    done = _run(_DIES, tmp_path)
    lines = done.stderr.splitlines()
    assert done.returncode == 1 and len(lines) == 2, done.stderr
    assert lines[0] == "replay: the driver JVM died" and lines[1].startswith("replay: Spark's log (1 line) is in ")
