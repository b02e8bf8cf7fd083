"""A real Spark standalone cluster (1 master + N workers) started from the pyspark install, for tests.

    with standalone_cluster(workers=2) as cluster:
        subprocess.run([".venv/bin/replay", "run", "--config", cfg, "--master", cluster.master_url,
                        *cluster.submit_args()])

Every process runs in its own process group and is stopped on exit from the block, on failure too
(and from atexit if the interpreter dies with the block still open). The driver is the caller's
process (client mode): standalone cannot run Python drivers in cluster mode.

Also a pytest plugin: `pytest_plugins = ["cluster"]` in a test module registers the `cluster` marker
and gives the session-scoped `spark_cluster` fixture (shared by every module that uses it).
"""
from __future__ import annotations

import atexit
import functools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

HOST = "127.0.0.1"
# The interpreter running the tests is the venv's: executors must use the same Python (same pyspark, same
# event_replay), so it is also PYSPARK_PYTHON for the workers and for drivers started by the tests.
PYTHON = sys.executable


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    # Ports from the OS, never Spark's defaults (7077/8080/8081/4040): other suites may run a cluster at once.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def get_json(url: str, timeout: float = 5.0):
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read().decode())


@dataclass
class Worker:
    port: int
    webui_port: int
    work_dir: Path
    log: Path
    proc: subprocess.Popen | None = None


@dataclass
class StandaloneCluster:
    master_url: str
    webui_url: str
    base_dir: Path
    event_log_dir: Path
    workers: list[Worker] = field(default_factory=list)
    master_log: Path | None = None
    _procs: list[subprocess.Popen] = field(default_factory=list, repr=False)

    def __str__(self) -> str:
        return self.master_url

    def state(self) -> dict:
        """The master's JSON status (workers, apps)."""
        return get_json(f"{self.webui_url}/json/")

    def alive_workers(self) -> list[dict]:
        return [w for w in self.state().get("workers", []) if w.get("state") == "ALIVE"]

    def spark_conf(self) -> dict[str, str]:
        """Conf for a driver on this cluster: reachable on loopback, waits for every executor before
        scheduling (so every worker gets tasks), uncompressed single-file event logs to inspect."""
        return {
            "spark.driver.host": HOST,
            "spark.driver.bindAddress": HOST,
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s",
            "spark.executor.memory": "768m",
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": self.event_log_dir.as_uri(),
            "spark.eventLog.compress": "false",
            "spark.eventLog.rolling.enabled": "false",
            "spark.pyspark.python": PYTHON,
            "spark.pyspark.driver.python": PYTHON,
        }

    def submit_args(self) -> list[str]:
        """spark_conf() as `--conf KEY=VALUE` arguments (for `replay run` and spark-submit alike)."""
        return [a for k, v in self.spark_conf().items() for a in ("--conf", f"{k}={v}")]

    def driver_env(self) -> dict[str, str]:
        return {**os.environ, "PYSPARK_PYTHON": PYTHON, "PYSPARK_DRIVER_PYTHON": PYTHON,
                "SPARK_LOCAL_IP": HOST, "PYTHONUNBUFFERED": "1"}

    def worker_of_executor(self, app_id: str, executor_id: str) -> Worker:
        """The worker that ran an executor: each worker keeps <work dir>/<app id>/<executor id>/."""
        owners = [w for w in self.workers if (w.work_dir / app_id / executor_id).is_dir()]
        if len(owners) != 1:
            raise LookupError(f"executor {executor_id} of {app_id}: found in {len(owners)} worker dirs")
        return owners[0]

    def finished_event_logs(self) -> set[Path]:
        """Event logs of the applications that have ended on this cluster (one file each, see spark_conf())."""
        return {p for p in self.event_log_dir.iterdir() if p.is_file() and not p.name.endswith(".inprogress")}

    @staticmethod
    def task_counts(event_log: Path) -> tuple[str, dict[str, int]]:
        """(app id, successful tasks per executor id) from an application's uncompressed JSON-lines event log."""
        app_id, counts = None, {}
        with open(event_log, encoding="utf-8") as f:
            for line in f:
                ev = json.loads(line)
                kind = ev.get("Event")
                if kind == "SparkListenerApplicationStart":
                    app_id = ev.get("App ID")
                elif kind == "SparkListenerTaskEnd" and ev.get("Task End Reason", {}).get("Reason") == "Success":
                    ex = ev["Task Info"]["Executor ID"]
                    counts[ex] = counts.get(ex, 0) + 1
        if app_id is None:
            raise ValueError(f"{event_log}: no SparkListenerApplicationStart")
        return app_id, counts

    def logs_tail(self, chars: int = 3000) -> str:
        parts = []
        for log in [self.master_log, *(w.log for w in self.workers)]:
            if log is not None and log.exists():
                parts.append(f"--- {log.name}\n{log.read_text(errors='replace')[-chars:]}")
        return "\n".join(parts)


def _process_env(work: Path) -> dict[str, str]:
    home = spark_home()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update({
        "SPARK_HOME": str(home),
        "SPARK_CONF_DIR": str(work / "conf"),  # ours: nothing from a machine-wide spark-defaults.conf
        "SPARK_LOCAL_IP": HOST,
        "PYSPARK_PYTHON": PYTHON,
        "SPARK_NO_DAEMONIZE": "1",
    })
    return env


def _start(cmd: list[str], env: dict[str, str], log: Path, cwd: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        # A new session = a new process group: the JVM and the executors a worker forks go down together.
        return subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=cwd, start_new_session=True)


def _stop(procs: list[subprocess.Popen], grace: float = 15.0) -> None:
    """SIGTERM every group (workers first: they take their executors along), then SIGKILL what is left."""
    for p in reversed(procs):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + grace
    for p in reversed(procs):
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        # The group may outlive its leader (executor JVMs): kill the group whatever the leader's state.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


@contextmanager
def standalone_cluster(workers: int = 2, cores: int = 1, memory: str = "1g", base_dir: Path | None = None,
                       timeout: float = 300.0) -> Iterator[StandaloneCluster]:
    """Start a master and `workers` workers on 127.0.0.1; yield once all workers are ALIVE; stop all after."""
    own_tmp = None
    if base_dir is None:
        own_tmp = tempfile.TemporaryDirectory(prefix="spark-standalone-")
        base_dir = Path(own_tmp.name)
    base_dir = Path(base_dir)
    (base_dir / "conf").mkdir(parents=True, exist_ok=True)
    # The master's REST submission server listens on a fixed port (6066): off, so clusters can run side by side.
    (base_dir / "conf" / "spark-defaults.conf").write_text("spark.master.rest.enabled false\n")
    (base_dir / "events").mkdir(exist_ok=True)
    spark_class = str(spark_home() / "bin" / "spark-class")
    env = _process_env(base_dir)

    port, webui = free_port(), free_port()
    cluster = StandaloneCluster(master_url=f"spark://{HOST}:{port}", webui_url=f"http://{HOST}:{webui}",
                                base_dir=base_dir, event_log_dir=base_dir / "events",
                                master_log=base_dir / "master.log")
    procs = cluster._procs
    stopper = functools.partial(_stop, procs)  # its own: unregister must not drop another cluster's
    atexit.register(stopper)  # a crashed test run must not leave JVMs behind
    try:
        procs.append(_start([spark_class, "org.apache.spark.deploy.master.Master", "--host", HOST,
                             "--port", str(port), "--webui-port", str(webui)], env, cluster.master_log, base_dir))
        # Workers start at once, not after the master is up: JVM start-up dominates (seconds each on a busy
        # machine) and a worker that comes up first just retries its registration.
        for i in range(workers):
            w = Worker(port=free_port(), webui_port=free_port(), work_dir=base_dir / f"worker-{i}",
                       log=base_dir / f"worker-{i}.log")
            w.work_dir.mkdir(exist_ok=True)
            w.proc = _start([spark_class, "org.apache.spark.deploy.worker.Worker", "--host", HOST,
                             "--port", str(w.port), "--webui-port", str(w.webui_port), "--cores", str(cores),
                             "--memory", memory, "--work-dir", str(w.work_dir), cluster.master_url],
                            env, w.log, base_dir)
            procs.append(w.proc)
            cluster.workers.append(w)
        _wait(lambda: len(cluster.alive_workers()) == workers, procs, timeout, f"{workers} ALIVE workers", cluster)
        yield cluster
    finally:
        _stop(procs)
        atexit.unregister(stopper)
        if own_tmp is not None:
            own_tmp.cleanup()


def _wait(ready, procs: list[subprocess.Popen], timeout: float, what: str, cluster: StandaloneCluster) -> None:
    deadline = time.monotonic() + timeout
    while True:
        dead = [p.args[1] for p in procs if p.poll() is not None]
        if dead:
            raise RuntimeError(f"spark standalone: {dead} exited while waiting for {what}\n{cluster.logs_tail()}")
        try:
            if ready():
                return
        except OSError:  # UI not listening yet (URLError is an OSError)
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"spark standalone: no {what} after {timeout:.0f} s\n{cluster.logs_tail()}")
        time.sleep(0.5)


# --- pytest plugin part -------------------------------------------------------------------------------

def pytest_configure(config):
    config.addinivalue_line("markers", "cluster: tests that start a Spark standalone master and workers")


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory) -> Iterator[StandaloneCluster]:
    with standalone_cluster(workers=2, cores=1, memory="1g",
                            base_dir=tmp_path_factory.mktemp("spark-standalone")) as cluster:
        yield cluster


def canonical(table_dir: Path):
    """A Parquet output as a pandas frame in one order (floats excluded from the sort keys), to compare runs."""
    import pandas as pd
    import pyarrow.parquet as pq

    df = pq.read_table(table_dir).to_pandas()
    exact = [c for c in df.columns if not pd.api.types.is_float_dtype(df[c])]
    return df.sort_values(exact, kind="mergesort").reset_index(drop=True)
