"""A throwaway PostgreSQL (scripts/postgres.sh, Debian's `postgresql`) as a pytest plugin:
`pytest_plugins = ["postgres"]` gives the session-scoped `postgres_url` fixture (a SQLAlchemy URL on a free port),
shared by every module that uses it. Skipped only when the server binaries are absent outside CI; in CI it must run."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "postgres.sh"


@pytest.fixture(scope="session")
def postgres_url():
    if subprocess.run(["bash", str(SCRIPT), "bindir"], capture_output=True).returncode != 0:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL server binaries are missing in CI (.ci/run installs the postgresql package)")
        pytest.skip("PostgreSQL server binaries not installed (apt-get install postgresql)")
    # Not under pytest's 0700 tmp dirs: as root the server runs as `postgres`, which must reach its folder.
    base = Path(tempfile.mkdtemp(prefix="replay-pg-"))
    base.chmod(0o755)
    proc = subprocess.run(["bash", str(SCRIPT), "start", str(base / "cluster")], capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr
    try:
        yield proc.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(base / "cluster")], capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def postgres_database(postgres_url):
    """A factory: a fresh database of the given name on the shared server; returns its SQLAlchemy URL."""
    return lambda name: create_database(postgres_url, name)


def create_database(url: str, name: str) -> str:
    """A fresh database on the same server (each Airflow test gets its own metadata DB); returns its URL."""
    import psycopg2

    port = url.split(":")[-1].split("/")[0]
    conn = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres")
    conn.autocommit = True  # CREATE DATABASE cannot run in a transaction
    with conn.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cur.execute(f'CREATE DATABASE "{name}"')
    conn.close()
    return url.rsplit("/", 1)[0] + f"/{name}"
