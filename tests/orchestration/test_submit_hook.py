"""The project's spark-submit hook (orchestration/submit_hook.py) against the pinned Apache Spark provider, with a
real spark-submit (master local[1]) of tiny Python applications: the arguments reach the job, a failed job raises
JobFailed naming its own cause, its traceback goes to the trace file instead of the task log, and on_kill stops the
driver with SIGTERM first. The replay's own jobs run through it in tests/orchestration/test_operators.py."""
from __future__ import annotations

import json
import sys
import threading
import time

import pytest

from event_replay.orchestration.submit_hook import (
    CONN_ID,
    JobFailed,
    ReplaySubmitHook,
    master_of,
    spark_conf,
)

FAILING = '''
import sys
print("job args", sys.argv[1:], flush=True)
try:
    raise KeyError("inner")
except KeyError:
    raise ValueError("the job broke")
'''
SLEEPING = '''
import signal, sys, time
def stop(*a):
    open(sys.argv[2], "w").close()
    sys.exit(130)
signal.signal(signal.SIGTERM, stop)
open(sys.argv[1], "w").close()
time.sleep(600)
'''


@pytest.fixture
def local_connection(monkeypatch, tmp_path):
    monkeypatch.setenv(f"AIRFLOW_CONN_{CONN_ID.upper()}", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    monkeypatch.setenv("REPLAY_TRACE_DIR", str(tmp_path / "traces"))
    monkeypatch.delenv("REPLAY_DEBUG", raising=False)
    monkeypatch.delenv("REPLAY_SPARK_CONF", raising=False)


def _shown(hook, monkeypatch) -> list[str]:
    """What the hook logs of the job's output (the provider's logger, as the task log gets it)."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    shown = []

    class Recorder:
        def info(self, msg, *args, **kw):
            shown.append(str(msg) % args if args else str(msg))

        def __getattr__(self, name):
            return lambda *a, **k: None

    monkeypatch.setattr(SparkSubmitHook, "log", property(lambda self: Recorder()))
    return shown


@pytest.mark.spark
@pytest.mark.timeout(300)
def test_a_failed_job_raises_its_own_cause_and_keeps_its_traceback_out_of_the_log(local_connection, tmp_path,
                                                                                 monkeypatch):
    app = tmp_path / "failing_job.py"
    app.write_text(FAILING)
    hook = ReplaySubmitHook(str(app), ["--config", "c.yaml"], name="hook-test")
    shown = _shown(hook, monkeypatch)
    with pytest.raises(JobFailed) as failed:
        hook.submit()
    assert master_of() == ("local[1]", None)
    assert any(line == "job args ['--config', 'c.yaml']" for line in shown), shown
    trace = hook.replay_tail.traces.path
    assert str(failed.value) == f"ValueError: the job broke (traceback in {trace})"
    assert "Traceback (most recent call last):" in trace.read_text() and "KeyError: 'inner'" in trace.read_text()
    assert not any(line.startswith(("Traceback", "File ", "KeyError")) for line in shown), shown
    assert any(f"lines of a traceback in {trace}" in line for line in shown), shown


@pytest.mark.spark
@pytest.mark.timeout(300)
def test_on_kill_sigterms_the_driver_before_the_providers_kill(local_connection, tmp_path):
    app = tmp_path / "sleeping_job.py"
    app.write_text(SLEEPING)
    ready, stopped = tmp_path / "ready", tmp_path / "stopped"
    hook = ReplaySubmitHook(str(app), [str(ready), str(stopped)])
    failures = []

    def run():
        try:
            hook.submit()
        except JobFailed as exc:
            failures.append(str(exc))

    job = threading.Thread(target=run)
    job.start()
    deadline = time.monotonic() + 240
    while not ready.exists() and time.monotonic() < deadline and job.is_alive():
        time.sleep(0.2)
    assert ready.exists(), failures
    hook.on_kill()
    job.join(120)
    assert not job.is_alive() and stopped.exists()  # the driver had its SIGTERM: it could clean up
    assert failures and failures[0].startswith("spark-submit failed"), failures


def test_the_conf_every_job_carries(monkeypatch):
    from event_replay.driver_jvm import QUICK_COMPILER
    from event_replay.fatal import EXIT_ON_OOM

    for name in ("REPLAY_PYSPARK_PYTHON", "REPLAY_SPARK_LOG_LEVEL", "REPLAY_SPARK_CONF"):
        monkeypatch.delenv(name, raising=False)
    plain = spark_conf()
    assert plain["spark.pyspark.python"] == plain["spark.pyspark.driver.python"] == sys.executable
    assert plain["spark.log.level"] == "WARN"
    assert plain["spark.driver.extraJavaOptions"].startswith(EXIT_ON_OOM)
    assert QUICK_COMPILER not in plain["spark.driver.extraJavaOptions"]  # an unknown input: C2, as Spark's default
    assert QUICK_COMPILER in spark_conf(input_bytes=90_000)["spark.driver.extraJavaOptions"]  # a day of the demo
    assert QUICK_COMPILER not in spark_conf(input_bytes=109 << 20)["spark.driver.extraJavaOptions"]  # 10M rows
    monkeypatch.setenv("REPLAY_PYSPARK_PYTHON", "/opt/py/bin/python")
    monkeypatch.setenv("REPLAY_SPARK_LOG_LEVEL", "INFO")
    monkeypatch.setenv("REPLAY_SPARK_CONF", json.dumps({"spark.executor.memory": "8g",
                                                        "spark.driver.extraJavaOptions": "-Xss4m"}))
    conf = spark_conf()
    assert conf["spark.pyspark.python"] == conf["spark.pyspark.driver.python"] == "/opt/py/bin/python"
    assert conf["spark.log.level"] == "INFO" and conf["spark.executor.memory"] == "8g"
    # The deployment's JVM options are kept, first; the exit on OOM is added, not substituted.
    assert conf["spark.driver.extraJavaOptions"].startswith(f"-Xss4m {EXIT_ON_OOM}")


@pytest.mark.parametrize("uri", ["spark://spark-master:7077?deploy-mode=client", "yarn://?deploy-mode=cluster",
                                 json.dumps({"conn_type": "spark", "host": "local[*]"}),
                                 json.dumps({"conn_type": "spark", "host": "spark://m", "port": 7077})])
def test_the_record_s_master_is_the_one_the_provider_submits_to(monkeypatch, uri):
    """master_of reads the connection as the provider documents it; the provider's own resolution (private: read
    here only to hold the two together across upgrades) gives the same master and deploy mode."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_UNDER_TEST", uri)
    resolved = SparkSubmitHook(conn_id="spark_under_test")._resolve_connection()
    assert master_of("spark_under_test") == (resolved["master"], resolved["deploy_mode"])
    assert master_of("no_such_connection") == ("yarn", None)


def test_the_hook_is_the_providers_with_documented_methods_only():
    """Only `submit`, `on_kill` and `log` of the provider's hook are overridden (the rest is added, replay_*)."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    overridden = {name for name in vars(ReplaySubmitHook) if not name.startswith("__")
                  and any(name in vars(base) for base in SparkSubmitHook.__mro__)}
    assert overridden == {"submit", "on_kill", "log"}
