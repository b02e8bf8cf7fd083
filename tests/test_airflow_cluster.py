"""The production shape on one machine: Airflow's api-server, scheduler (LocalExecutor) and dag-processor on a
PostgreSQL metadata DB, the `event_time_backfill` DAG triggered as a user would (unpause + trigger with a conf), its
`replay_spark` connection pointed at a Spark standalone cluster (master + 2 workers on 127.0.0.1) exactly as in
docker-compose.yml. The partitions' outputs must equal a local[2] replay of the same partitions, and both workers
must have run tasks.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from airflow_env import ROOT, VENV_BIN, airflow, airflow_env, prepare, write_config
from event_replay.history.partitions import has_state
from event_replay.layout import DATASETS
from event_replay.samples.days import generate_days, write_days
from cluster import canonical

pytest_plugins = ["cluster", "postgres"]
pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.timeout(2400), pytest.mark.integration]
DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]
DAG_ID = "event_time_backfill"


def _start(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen:
    with open(log, "wb") as out:  # own process group: the service and what it forks stop together
        return subprocess.Popen([str(VENV_BIN / "airflow"), *args], env=env, cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _logs(home: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(home.glob("*.log")))


def _wait_http(url: str, procs: list[subprocess.Popen], home: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            raise AssertionError(f"an Airflow service exited:\n{_logs(home)}")
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(2)
    raise AssertionError(f"{url} not up after {timeout:.0f} s:\n{_logs(home)}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _query(pg: dict, sql: str, *args) -> list[tuple]:
    import psycopg2

    with psycopg2.connect(**pg) as conn, conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def _local_replay(config: Path, output: Path) -> None:
    """The same partitions replayed by the CLI on local[2], in order, as the DAG plans them."""
    for i, day in enumerate(DAYS):
        args = ["--first"] if i == 0 else []
        args += ["--end-of-input", "flush" if i == len(DAYS) - 1 else "hold"]
        proc = subprocess.run([str(VENV_BIN / "replay"), "run", "--config", str(config), "--partition", day,
                               "--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=4", *args],
                              cwd=ROOT, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "PYSPARK_PYTHON": sys.executable})
        assert proc.returncode == 0, f"local replay of {day}:\n{proc.stderr[-4000:]}"


def test_backfill_dag_on_postgres_local_executor_and_spark_cluster(tmp_path, spark_cluster, postgres_database):
    source = tmp_path / "data"
    write_days(source, generate_days(DAYS[0], days=len(DAYS), rows_per_day=300, splits=3, seed=11, rate=20.0))
    config = write_config(tmp_path / "job.yaml", source, tmp_path / "out")
    local_config = write_config(tmp_path / "local.yaml", source, tmp_path / "local-out")

    home = tmp_path / "airflow"
    port = _free_port()
    db_url = postgres_database("airflow_cluster_test")
    pg = {"host": "127.0.0.1", "port": db_url.split(":")[-1].split("/")[0], "user": "postgres",
          "dbname": "airflow_cluster_test"}
    conf = {**spark_cluster.spark_conf(), "spark.sql.shuffle.partitions": "4"}
    master_host, master_port = spark_cluster.master_url.removeprefix("spark://").split(":")
    env = airflow_env(
        home, sql_alchemy_conn=db_url,
        AIRFLOW__CORE__EXECUTOR="LocalExecutor",
        AIRFLOW__CORE__PARALLELISM="4",
        AIRFLOW__API__BASE_URL=f"http://127.0.0.1:{port}",
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{port}/execution/",
        AIRFLOW__API_AUTH__JWT_SECRET="cluster-test-jwt-secret-0123456789abcdef0123456789abcdef",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS="True",
        AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL="10",
        # Parse each DAG file once, not every 30 s: re-parsing competes with the Spark jobs for the 2 cores.
        AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL="3600",
        # The connection exactly as docker-compose.yml sets it, only the master's address differs.
        AIRFLOW_CONN_REPLAY_SPARK=f"spark://{master_host}:{master_port}?deploy-mode=client",
        REPLAY_SPARK_CONF=json.dumps(conf),
        SPARK_LOCAL_IP="127.0.0.1",
    )
    prepare(env, pool_slots=1)
    home.mkdir(exist_ok=True)
    procs = [_start(env, home / "api-server.log", "api-server", "--host", "127.0.0.1", "--port", str(port)),
             _start(env, home / "scheduler.log", "scheduler"),
             _start(env, home / "dag-processor.log", "dag-processor")]
    # The local reference run overlaps the services' start-up.
    _local_replay(local_config, tmp_path / "local-out")
    logs_before = spark_cluster.finished_event_logs()
    try:
        _wait_http(f"http://127.0.0.1:{port}/api/v2/monitor/health", procs, home)
        deadline = time.monotonic() + 300
        while DAG_ID not in airflow(env, "dags", "list", "-o", "plain", check=False, timeout=120).stdout:
            assert time.monotonic() < deadline, f"the dag-processor did not parse {DAG_ID}:\n{_logs(home)}"
            time.sleep(5)
        airflow(env, "dags", "unpause", DAG_ID)
        run_id = "cluster_backfill"
        request = {"config": str(config), "start_date": DAYS[0], "end_date": DAYS[-1], "run_data_quality": False,
                   "partitions_per_job": 1}  # one spark-submit per partition: each commits its state, one app each
        airflow(env, "dags", "trigger", DAG_ID, "-r", run_id, "-c", json.dumps(request))
        deadline = time.monotonic() + 1800
        # The run's state from the metadata DB itself (the CLI's output mixes logs with its JSON).
        while (state := next(iter(_query(pg, "SELECT state FROM dag_run WHERE run_id = %s", run_id)), [None])[0]) \
                not in ("success", "failed"):
            assert time.monotonic() < deadline, f"run still {state}:\n{_logs(home)}"
            time.sleep(10)
        assert state == "success", f"DAG run {state}:\n{_logs(home)}\n{spark_cluster.logs_tail()}"
    finally:
        _stop(procs)

    # The tasks were queued by the scheduler (its LocalExecutor ran them), recorded in PostgreSQL.
    rows = _query(pg, "SELECT ti.task_id, ti.state, j.job_type FROM task_instance ti "
                      "JOIN job j ON j.id = ti.queued_by_job_id WHERE ti.dag_id = %s", DAG_ID)
    assert {r[0] for r in rows} >= {"validate", "plan", "replay_partitions", "report"}, rows
    assert all(r[1] in ("success", "skipped") for r in rows), rows
    assert {r[2] for r in rows} == {"SchedulerJob"}, rows

    out = tmp_path / "out"
    for day in DAYS:
        for ds in DATASETS:
            got, want = canonical(out / ds / f"dt={day}"), canonical(tmp_path / "local-out" / ds / f"dt={day}")
            assert list(got.columns) == list(want.columns), (ds, day)
            pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-9, obj=f"{ds}/dt={day}")
    assert sum(len(canonical(out / "windows" / f"dt={d}")) for d in DAYS) > 0
    for day in DAYS[:-1]:
        assert has_state(None, str(out), day), day

    # One Spark application per partition ran on the cluster, and both workers ran tasks.
    apps = spark_cluster.finished_event_logs() - logs_before
    assert len(apps) == len(DAYS), apps
    per_worker: dict[int, int] = {}
    for log in apps:
        app_id, per_executor = spark_cluster.task_counts(log)
        assert "driver" not in per_executor, f"{app_id}: tasks ran in the driver"
        for executor_id, n in per_executor.items():
            worker = spark_cluster.worker_of_executor(app_id, executor_id)
            per_worker[worker.port] = per_worker.get(worker.port, 0) + n
    print(f"\n{len(spark_cluster.alive_workers())} workers; successful tasks per worker port: {per_worker}")
    assert sorted(per_worker) == sorted(w.port for w in spark_cluster.workers)
    assert all(n > 0 for n in per_worker.values())
