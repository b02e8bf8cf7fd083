"""The soak's faults (tests/reliability/chaos.py) do what they say: a filled file system refuses every write until it
is freed; a killed PostgreSQL (postmaster and backends at once) refuses connections, and starts again with the data
it had committed."""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from chaos import fill, free, kill_postgres, mount_tmpfs, restart_postgres, unmount

ROOT = Path(__file__).resolve().parents[2]


def test_a_filled_file_system_refuses_writes_until_freed():
    where = mount_tmpfs("2m")
    if where is None:
        pytest.skip("cannot mount a tmpfs here (needs root and a kernel that allows it)")
    try:
        (where / "out").mkdir()
        fill(where)
        with pytest.raises(OSError) as exc:
            with open(where / "out" / "part-0.parquet", "wb", buffering=0) as f:
                f.write(b"x" * 65536)
        assert exc.value.errno == errno.ENOSPC
        free(where)
        (where / "out" / "part-0.parquet").write_bytes(b"x" * 65536)
        assert [p.name for p in where.iterdir()] == ["out"]  # the filler is gone
        unmount(where, keep=True)  # what the soak does at its end: the output stays, on the disk below
        assert not os.path.ismount(where) and (where / "out" / "part-0.parquet").stat().st_size == 65536
    finally:
        unmount(where)


@pytest.mark.integration
def test_a_killed_postgres_starts_again_with_its_data():
    psycopg2 = pytest.importorskip("psycopg2")
    script = ROOT / "scripts" / "postgres.sh"
    if subprocess.run(["bash", str(script), "bindir"], capture_output=True).returncode != 0:
        pytest.skip("PostgreSQL server binaries not installed (apt-get install postgresql)")
    base = Path(tempfile.mkdtemp(prefix="replay-pg-"))  # not under pytest's 0700 folders: the server runs as postgres
    base.chmod(0o755)
    cluster = base / "cluster"
    try:
        started = subprocess.run(["bash", str(script), "start", str(cluster)], capture_output=True, text=True,
                                 timeout=300)
        assert started.returncode == 0, started.stderr
        db = {"host": "127.0.0.1", "port": int((cluster / "port").read_text()), "user": "postgres",
              "dbname": "airflow", "connect_timeout": 5}
        with psycopg2.connect(**db) as conn, conn.cursor() as cur:
            cur.execute("CREATE TABLE runs (id text); INSERT INTO runs VALUES ('before the kill')")
        kill_postgres(cluster)
        with pytest.raises(psycopg2.OperationalError):  # down: what Airflow's scheduler and tasks meet
            psycopg2.connect(**db).close()
        restart_postgres(cluster)
        with psycopg2.connect(**db) as conn, conn.cursor() as cur:
            cur.execute("SELECT id FROM runs")
            assert cur.fetchall() == [("before the kill",)]
    finally:
        subprocess.run(["bash", str(script), "stop", str(cluster)], capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)
