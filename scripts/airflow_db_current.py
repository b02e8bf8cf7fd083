"""Is the project-local Airflow's metadata DB current? `make airflow-init` skips `airflow db migrate` and
`airflow pools set` (two Airflow CLI start-ups, about 10 s of CPU) when it is.

    python scripts/airflow_db_current.py AIRFLOW_HOME SLOTS check    # exit 0: current, 1: migrate
    python scripts/airflow_db_current.py AIRFLOW_HOME SLOTS record   # after a successful migrate and pools set

Current means: the default SQLite DB (`AIRFLOW_HOME/airflow.db`, named by airflow.cfg, not overridden in the
environment) exists, its alembic
revision is the one recorded after the last migrate with the installed Airflow version, and the replay_spark pool
has SLOTS slots. Anything else (a new Airflow, a DB reset or deleted, another DB, a pool changed) migrates again.
Reads the DB with sqlite3 only: importing Airflow would cost what it saves.
"""
from __future__ import annotations

import configparser
import json
import os
import sqlite3
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

STAMP = ".db-current.json"
POOL = "replay_spark"


def observed(home: Path, slots: str) -> dict | None:
    """What makes the DB current, as found now; None when it cannot be told (then it is not current)."""
    db = (home / "airflow.db").resolve()
    if os.environ.get("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN") or not db.is_file() or _configured_db(home) != db:
        return None
    try:
        airflow = version("apache-airflow")
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            revision = con.execute("SELECT version_num FROM alembic_version").fetchall()
            pool = con.execute("SELECT slots FROM slot_pool WHERE pool = ?", (POOL,)).fetchall()
    except (sqlite3.Error, PackageNotFoundError):
        return None
    if len(revision) != 1 or pool != [(int(slots),)]:
        return None
    return {"airflow": airflow, "revision": revision[0][0], "pool_slots": int(slots)}


def _configured_db(home: Path) -> Path | None:
    """The SQLite file airflow.cfg names (None: another database, or no airflow.cfg yet)."""
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(home / "airflow.cfg")
        url = cfg.get("database", "sql_alchemy_conn")
    except (configparser.Error, OSError):
        return None
    return Path(url[len("sqlite:///"):]) if url.startswith("sqlite:///") else None


def main(argv: list[str]) -> int:
    home, slots, command = Path(argv[0]), argv[1], argv[2]
    now = observed(home, slots)
    stamp = home / STAMP
    if command == "record":
        if now is None:
            stamp.unlink(missing_ok=True)
        else:
            stamp.write_text(json.dumps(now) + "\n")
        return 0
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return 1
    return 0 if now is not None and recorded == now else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
