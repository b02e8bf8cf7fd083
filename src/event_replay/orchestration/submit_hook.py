"""The project's spark-submit hook: one Spark job through the Apache Spark provider's public API only.

`ReplaySubmitHook` is a `SparkSubmitHook` that overrides only what the provider documents: `submit`, `on_kill` and
the `log` every hook has (the provider logs each line of the job's output through it). On that it adds:
- the Spark conf every job carries (`spark_conf`) and the engine's extension jar beside the deployment's jars
  (extension.py); spark-submit found next to the worker's Python when the PATH lacks it;
- the job's output lines kept (`JobTail`: the cause of a failure, failures.py) and its tracebacks kept out of the
  task log (a trace file instead, traces.py); a failed job raises `JobFailed`, whose text is that cause;
- a stop that SIGTERMs the job's driver first, so that it cleans up (cancel.py), then the provider's own kill;
- the master and deploy mode its connection names (`master_of`), for the run record.
A provider upgrade that keeps its documented API keeps this working; tests/orchestration/test_submit_hook.py runs
it against the pinned provider with a real spark-submit.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import psutil
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.sdk.exceptions import AirflowException

from ..extension import with_extension_jar
from ..driver_jvm import driver_java_options
from .cancel import GRACE_SECONDS, stop_spark_submit
from .failures import JobTail, cause_of, tail_buffer

CONN_ID = "replay_spark"
log = logging.getLogger(__name__)


def spark_conf(input_bytes: int | None = None) -> dict[str, str]:
    """The Python the Spark driver and workers run: this worker's (it has the project), unless configured;
    REPLAY_SPARK_CONF (a JSON object) adds or overrides any Spark conf for the cluster at hand; the driver's JVM
    options get what driver_jvm.py adds (exit on OutOfMemoryError, the class archive, and for a job that reads
    about `input_bytes`, when small, the quick compiler).
    Spark logs at WARN: its INFO lines would bury the per-partition progress in the task log
    (REPLAY_SPARK_LOG_LEVEL=INFO or DEBUG brings the full log back)."""
    conf = {"spark.pyspark.python": os.environ.get("REPLAY_PYSPARK_PYTHON", sys.executable),
            "spark.pyspark.driver.python": os.environ.get("REPLAY_PYSPARK_PYTHON", sys.executable),
            "spark.log.level": os.environ.get("REPLAY_SPARK_LOG_LEVEL", "WARN")}
    conf.update(json.loads(os.environ.get("REPLAY_SPARK_CONF") or "{}"))
    conf["spark.driver.extraJavaOptions"] = driver_java_options(conf.get("spark.driver.extraJavaOptions"), input_bytes)
    return conf


class JobFailed(AirflowException):
    """The Spark job failed; the text is its cause in one line (failures.cause_of)."""


class _JobLog:
    """The provider hook's logger, with each bare line it logs (the job's output) passed through the tail."""

    def __init__(self, logger: Any, tail: JobTail):
        self._logger, self._tail = logger, tail

    def info(self, msg: Any, *args: Any, **kw: Any) -> None:
        if args or kw:  # the provider's own messages ("Identified spark driver id: %s")
            self._logger.info(msg, *args, **kw)
            return
        for line in self._tail.show(str(msg)):
            self._logger.info(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)


class ReplaySubmitHook(SparkSubmitHook):
    """One spark-submit of `application` with `args` through the connection `conn_id` (module doc). `tail` keeps
    the output of every job of one task (one trace file per task attempt); `input_bytes`: about what the job reads
    (spark_conf)."""

    def __init__(self, application: str, args: list[str], *, conn_id: str = CONN_ID, name: str = "event-replay",
                 conf: dict[str, Any] | None = None, jars: str | None = None, tail: JobTail | None = None,
                 input_bytes: int | None = None):
        self.replay_application, self.replay_args = application, list(args)
        self.replay_tail = tail if tail is not None else tail_buffer()
        super().__init__(conf={**spark_conf(input_bytes), **(conf or {})}, conn_id=conn_id, jars=with_extension_jar(jars),
                         name=name, application_args=list(args))

    @property
    def log(self) -> Any:
        tail = getattr(self, "replay_tail", None)  # the provider's __init__ logs before ours has set it
        return super().log if tail is None else _JobLog(super().log, tail)

    def submit(self, application: str = "", **kwargs: Any) -> str | None:
        if shutil.which("spark-submit") is None:
            # pyspark installs spark-submit next to the worker's python; the worker's PATH may not have it.
            os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        self.replay_tail.clear()
        try:
            return super().submit(application or self.replay_application, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the job's own words say why, not the hook's command line
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise JobFailed(cause_of(self.replay_tail, f"spark-submit failed: {first}")) from None
        finally:
            for line in self.replay_tail.end():
                super().log.info(line)

    def on_kill(self) -> None:
        """SIGTERM to the job's driver first (cancel.py), then the provider's kill for what is left."""
        job = _spark_submit_process(self.replay_application)
        if job is not None and not stop_spark_submit(job, self.replay_application):
            log.warning("the Spark job did not stop within %.0f s of SIGTERM: killing it", GRACE_SECONDS)
        super().on_kill()


def _spark_submit_process(application: str) -> psutil.Process | None:
    """The spark-submit this process started for `application`: its child whose command line names it."""
    for child in psutil.Process().children():
        try:
            if any(application in part for part in child.cmdline()):
                return child
        except psutil.Error:
            continue
    return None


def master_of(conn_id: str = CONN_ID) -> tuple[str, str | None]:
    """(master, deploy mode) as the provider's Spark connection defines them: the host, a full master URL when it
    has a scheme (`local[*]`, `spark://h:7077`, `yarn`, `k8s://https://h`), else `<conn_type>://host`, then the port;
    the extra `deploy-mode`; yarn when there is no such connection (the provider's default)."""
    try:
        conn = SparkSubmitHook.get_connection(conn_id)
    except Exception:  # noqa: BLE001 - no such connection: spark-submit runs on the provider's default
        return "yarn", None
    host = conn.host or ""
    master = host if conn.conn_type == "spark" and host and ("://" in host or not conn.port) \
        else f"{conn.conn_type}://{host}"
    return (f"{master}:{conn.port}" if conn.port else master), conn.extra_dejson.get("deploy-mode")
