"""scripts/airflow_db_current.py: `make airflow-init` skips the migrate only while the DB is the one it migrated."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "airflow_db_current.py"


def run(home: Path, slots: int, command: str, **env: str) -> int:
    import os

    environ = {k: v for k, v in os.environ.items() if k != "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"}
    return subprocess.run([sys.executable, str(SCRIPT), str(home), str(slots), command], env={**environ, **env},
                          timeout=60).returncode


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An Airflow home as `airflow db migrate` and `airflow pools set replay_spark 1` leave it (the two tables read)."""
    (tmp_path / "airflow.cfg").write_text(f"[database]\nsql_alchemy_conn = sqlite:///{tmp_path}/airflow.db\n")
    with sqlite3.connect(tmp_path / "airflow.db") as con:
        con.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        con.execute("INSERT INTO alembic_version VALUES ('d2f4e1b3c5a7')")
        con.execute("CREATE TABLE slot_pool (pool VARCHAR(256), slots INTEGER)")
        con.executemany("INSERT INTO slot_pool VALUES (?, ?)", [("default_pool", 128), ("replay_spark", 1)])
    return tmp_path


def test_current_only_after_a_recorded_migrate(home):
    assert run(home, 1, "check") == 1  # never recorded: migrate
    assert run(home, 1, "record") == 0
    assert run(home, 1, "check") == 0
    assert run(home, 2, "check") == 1  # the pool must change


def test_a_new_revision_or_a_lost_db_migrates_again(home):
    run(home, 1, "record")
    with sqlite3.connect(home / "airflow.db") as con:
        con.execute("UPDATE alembic_version SET version_num = 'ffffffffffff'")
    assert run(home, 1, "check") == 1
    run(home, 1, "record")
    (home / "airflow.db").unlink()
    assert run(home, 1, "check") == 1


def test_another_database_is_never_taken_for_current(home):
    run(home, 1, "record")
    assert run(home, 1, "check", AIRFLOW__DATABASE__SQL_ALCHEMY_CONN="postgresql://x/y") == 1
    (home / "airflow.cfg").write_text("[database]\nsql_alchemy_conn = postgresql://x/y\n")
    assert run(home, 1, "check") == 1
