"""Airflow on a real PostgreSQL metadata DB: a throwaway cluster (scripts/postgres.sh, Debian's `postgresql`) on a
free port, `airflow db migrate`, then a nightly DAG run with real task execution (`airflow dags test`).
Skipped only when the PostgreSQL binaries are absent outside CI; in CI (CI set) it must run."""
from __future__ import annotations

import json

import pytest

from airflow_env import airflow, airflow_env, prepare, write_config
from event_replay.history.partitions import has_state
from event_replay.layout import DATASETS
from event_replay.samples.days import generate_days, write_days

pytest_plugins = ["postgres"]
pytestmark = [pytest.mark.spark, pytest.mark.timeout(900), pytest.mark.integration]


def test_nightly_dag_run_on_postgres_metadata_db(tmp_path, postgres_url):
    assert postgres_url.startswith("postgresql+psycopg2://")
    source, output = tmp_path / "data", tmp_path / "out"
    write_days(source, generate_days("2024-01-01", days=1, rows_per_day=300, splits=2, seed=5, rate=20.0))
    config = write_config(tmp_path / "job.yaml", source, output, splits=2)
    env = airflow_env(tmp_path / "airflow", sql_alchemy_conn=postgres_url)
    prepare(env)
    check = airflow(env, "db", "check")
    assert "Connection successful" in check.stdout + check.stderr
    assert not (tmp_path / "airflow" / "airflow.db").exists()  # nothing went to SQLite

    conf = {"config": str(config), "run_data_quality": False}
    airflow(env, "dags", "test", "nightly_event_time_backfill", "2024-01-01", "-c", json.dumps(conf), timeout=840)
    for ds in DATASETS:
        assert (output / ds / "dt=2024-01-01").is_dir(), ds
    assert has_state(None, str(output), "2024-01-01")  # nightly holds: the next night continues from it
    # The run is recorded in PostgreSQL.
    import psycopg2

    port = postgres_url.split(":")[-1].split("/")[0]
    with psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="airflow") as conn:
        cur = conn.cursor()
        cur.execute("SELECT state FROM dag_run WHERE dag_id = 'nightly_event_time_backfill'")
        assert [r[0] for r in cur.fetchall()] == ["success"]
        cur.execute("SELECT task_id, state FROM task_instance WHERE dag_id = 'nightly_event_time_backfill'")
        states = dict(cur.fetchall())
    assert states["replay_partition"] == "success" and states["report"] == "success", states
