"""Helpers for the Airflow tests: a throwaway AIRFLOW_HOME with the project's DAGs, and the airflow CLI in it."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
LOCAL_SPARK = json.dumps({"conn_type": "spark", "host": "local[2]"})
PORTS = range(8390, 8400)  # the ports this project's servers may use on a shared machine


def free_port() -> int:
    """A free port of PORTS, else any free one (the OS's choice)."""
    for port in [*PORTS, 0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise OSError("no free port")


def airflow_env(home: Path, sql_alchemy_conn: str | None = None, **extra: str) -> dict[str, str]:
    """The environment `make demo` uses, pointed at `home` (SQLite there unless a DB URL is given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(ROOT / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": sql_alchemy_conn or f"sqlite:///{home}/airflow.db",
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(home / "logs"),
        "AIRFLOW_CONN_REPLAY_SPARK": LOCAL_SPARK,
        # Small Spark jobs: few shuffle partitions, so a partition replays in seconds on 2 cores.
        "REPLAY_SPARK_CONF": json.dumps({"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"}),
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONUNBUFFERED": "1",
    })
    if sql_alchemy_conn and sql_alchemy_conn.startswith("postgresql") and not _importable("asyncpg"):
        # Airflow 3 derives an asyncpg URL for its async engine; without asyncpg in the lock, run sync-only.
        env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"] = ""
    env.update(extra)
    return env


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def airflow(env: dict[str, str], *args: str, timeout: float = 300, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(VENV_BIN / "airflow"), *args], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"airflow {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc


def prepare(env: dict[str, str], pool_slots: int = 1) -> None:
    """Migrate the metadata DB and create the pool the replay tasks run in."""
    airflow(env, "db", "migrate")
    airflow(env, "pools", "set", "replay_spark", str(pool_slots), "Concurrent replay Spark jobs")


def write_config(path: Path, source: Path, output: Path, splits: int = 3, **watermark: str) -> Path:
    """A small job config over a partitioned sample of `splits` splits (p0, p1, ...: samples/days.py;
    declared, as a partitioned history needs) (tumbling 10 s, 500 ms out-of-orderness, idle after 5 s)."""
    import yaml

    cfg = {
        "source": {"path": str(source), "format": "parquet", "splits": [f"p{i}" for i in range(splits)]},
        "watermark": {"strategy": "bounded_out_of_orderness", "max_out_of_orderness": "500ms", "emit": "periodic",
                      "interval": "200ms", "idle_timeout": "5s", **watermark},
        "window": {"type": "tumbling", "size": "10s", "allowed_lateness": "2s"},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
        "replay": {"end_of_input": "flush"},
        "output": {"path": str(output)},
    }
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path
