"""exits.py: every command's exit codes: 0 done, 2 refused (a config key named), 1 failed (one line: a Failure's
words, else the exception naming the file that keeps its traceback; the traceback itself with REPLAY_DEBUG), 130
interrupted."""
from __future__ import annotations

import pytest

from event_replay.exits import Failure, command, guarded
from event_replay.semantics.config_keys import ConfigError


def _raises(exc: BaseException):
    def run() -> int:
        raise exc
    return run


def test_a_run_that_finishes_gives_its_own_code():
    assert guarded("replay", lambda: 0) == 0
    assert guarded("replay", lambda: 3) == 3


def test_a_config_error_is_refused_naming_the_key(capsys):
    assert guarded("replay", _raises(ConfigError("window.size", "must be positive"))) == 2
    assert capsys.readouterr().err == "replay: config error: key 'window.size': must be positive\n"


def test_listed_refusals_exit_2_and_others_fail(capsys, tmp_path, monkeypatch):
    class Stale(RuntimeError):
        pass

    assert guarded("replay", _raises(Stale("state from another config")), (Stale,)) == 2
    assert capsys.readouterr().err == "replay: state from another config\n"
    monkeypatch.setenv("REPLAY_TRACE_DIR", str(tmp_path))
    monkeypatch.delenv("REPLAY_DEBUG", raising=False)
    assert guarded("replay", _raises(Stale("boom"))) == 1
    err = capsys.readouterr().err
    (trace,) = tmp_path.glob("replay-*.log")
    assert err == f"replay: failed: Stale: boom (traceback in {trace}; REPLAY_DEBUG=1 prints it)\n", err
    assert "Traceback (most recent call last)" in trace.read_text() and "Stale: boom" in trace.read_text()
    monkeypatch.setenv("REPLAY_DEBUG", "1")
    assert guarded("replay", _raises(Stale("boom"))) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and err.endswith("replay: failed: Stale: boom\n")


def test_a_py4j_error_is_named_by_the_java_exception_it_carries(capsys, tmp_path, monkeypatch):
    """No Java stack trace on stderr: the line names the Java exception; the file keeps the whole trace."""
    class Py4JJavaError(Exception):
        pass

    monkeypatch.setenv("REPLAY_TRACE_DIR", str(tmp_path))
    monkeypatch.delenv("REPLAY_DEBUG", raising=False)
    java = ("An error occurred while calling o58.parquet.\n: org.apache.spark.SparkException: Job aborted.\n"
            "\tat org.apache.spark.scheduler.DAGScheduler.failJob(DAGScheduler.scala:2898)\n")
    assert guarded("replay", _raises(Py4JJavaError(java))) == 1
    err = capsys.readouterr().err
    assert err.startswith("replay: failed: org.apache.spark.SparkException: Job aborted. (traceback in ")
    assert "\tat " not in err and err.count("\n") == 1, err


def test_a_failure_is_one_line_and_an_interrupt_is_130(capsys):
    assert guarded("tune", _raises(Failure("disk full: nothing was committed"))) == 1
    assert capsys.readouterr().err == "tune: failed: disk full: nothing was committed\n"
    assert guarded("tune", _raises(KeyboardInterrupt())) == 130


def test_a_system_exit_is_not_swallowed():
    with pytest.raises(SystemExit):
        guarded("replay", _raises(SystemExit(4)))


def test_a_command_is_its_function_guarded(capsys):
    class Bad(ValueError):
        pass

    def cmd(args) -> int:
        if args == "bad":
            raise Bad("what to fix")
        return 0

    run = command("replay tune", cmd, (Bad,))
    assert run("good") == 0
    assert run("bad") == 2 and capsys.readouterr().err == "replay tune: what to fix\n"
