"""`replay run` on a real Spark standalone cluster (1 master + 2 workers, from the pyspark install) gives the
same outputs as on local[2], and both workers really ran tasks.

In `make test` (a few minutes: JVM start-ups); deselect with `-m "not cluster"`.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import yaml

from cluster import canonical  # a plain helper; the module is also loaded as a plugin below, once

# tests/cluster.py as a plugin: the `cluster` marker and the session-scoped `spark_cluster` fixture (the fixture is
# not imported by name, so that pytest registers it once and other modules share the same cluster).
pytest_plugins = ["cluster"]
# Generous: the job runs ~50 small Spark jobs, each seconds long when the 2 cores are shared with other suites.
pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.timeout(2400)]

REPLAY = str(Path(sys.executable).parent / "replay")
ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = ("windows", "late_events", "watermarks", "quarantine", "counts")
# Same Spark conf for both runs, so that only the master differs; few shuffle partitions keep it quick.
COMMON_CONF = {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"}


def conf_args(conf: dict[str, str]) -> list[str]:
    return [a for k, v in conf.items() for a in ("--conf", f"{k}={v}")]


def replay_run(cfg: Path, master: str, extra: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([REPLAY, "run", "--config", str(cfg), "--master", master,
                             *conf_args(COMMON_CONF), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def finish(proc: subprocess.Popen, what: str, timeout: float = 1800) -> str:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    assert proc.returncode == 0, f"{what}: exit {proc.returncode}\n{err[-5000:]}"
    lines = [line for line in out.splitlines() if line.startswith("replay:")]
    assert len(lines) == 1, out
    return lines[0]


def write_config(log: Path, out: Path, path: Path) -> Path:
    # Absolute paths: executors run in their workers' work dirs, not in the driver's working directory.
    raw = yaml.safe_load((ROOT / "jobs" / "configs" / "demo.yaml").read_text())
    raw["source"]["path"] = str(log.resolve())
    raw["output"]["path"] = str(out.resolve())
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.fixture(scope="module")
def sample_log(tmp_path_factory) -> Path:
    log = tmp_path_factory.mktemp("cluster-log") / "log"
    res = subprocess.run([REPLAY, "sample", "--out", str(log), "--rows", "2000", "--splits", "3", "--seed", "23",
                          "--rate", "40", "--files", "4"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    # Floating-point values, as real logs have: a sum of doubles does not combine, so the windows fire by the
    # extension's walk (engine/windows/fixed_walk.py), whose closure the executors must deserialize and run.
    for f in sorted(log.rglob("*.parquet")):
        table = pq.read_table(f)
        i = table.schema.get_field_index("value")
        pq.write_table(table.set_column(i, "value", pc.divide(table["value"].cast("float64"), 8.0)), f)
    return log


@pytest.fixture(scope="module")
def local_run(sample_log, tmp_path_factory):
    """The local[2] run, started before the cluster fixture so that it overlaps the cluster's start-up."""
    d = tmp_path_factory.mktemp("local-run")
    out = d / "out"
    cfg = write_config(sample_log, out, d / "job.yaml")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONUNBUFFERED": "1"}
    return replay_run(cfg, "local[2]", [], env), out


def test_cluster_matches_local(local_run, spark_cluster, sample_log, tmp_path):
    alive = spark_cluster.alive_workers()
    print(f"\nstandalone master {spark_cluster.master_url}: {len(alive)} ALIVE workers")
    assert len(alive) == 2
    assert all(w["cores"] == 1 for w in alive)

    out = tmp_path / "cluster-out"
    cfg = write_config(sample_log, out, tmp_path / "job.yaml")
    logs_before = spark_cluster.finished_event_logs()  # the fixture is shared: find this run's application
    cluster_proc = replay_run(cfg, spark_cluster.master_url, spark_cluster.submit_args(), spark_cluster.driver_env())
    cluster_summary = finish(cluster_proc, f"replay run on {spark_cluster.master_url}\n{spark_cluster.logs_tail()}")
    local_proc, local_out = local_run
    local_summary = finish(local_proc, "replay run on local[2]")
    print(f"cluster: {cluster_summary}\nlocal:   {local_summary}")
    # Same counts in the summary line (everything before the timing).
    assert cluster_summary.split(", ")[:5] == local_summary.split(", ")[:5]
    assert "rows read 2000" in cluster_summary

    for name in OUTPUTS:
        got, want = canonical(out / name), canonical(local_out / name)
        assert list(got.columns) == list(want.columns), name
        assert len(got) == len(want), f"{name}: {len(got)} rows on the cluster, {len(want)} on local[2]"
        pd.testing.assert_frame_equal(got, want, check_exact=True, obj=name)  # bit for bit: doubles too
    # Not a vacuous comparison: the sample has firings, late rows and watermark changes.
    assert len(canonical(out / "windows")) > 0
    assert len(canonical(out / "late_events")) > 0
    assert len(canonical(out / "watermarks")) > 0
    assert dict(canonical(out / "windows").dtypes)["total"] == "float64"  # the walk's path was the one compared

    # Both workers ran tasks: successful tasks per executor from the event log, executor -> worker from the
    # workers' work dirs (<work dir>/<app id>/<executor id>/).
    new_logs = spark_cluster.finished_event_logs() - logs_before
    assert len(new_logs) == 1, new_logs
    app_id, per_executor = spark_cluster.task_counts(new_logs.pop())
    per_worker: dict[int, int] = {}
    for executor_id, n in per_executor.items():
        if executor_id == "driver":
            continue
        worker = spark_cluster.worker_of_executor(app_id, executor_id)
        per_worker[worker.port] = per_worker.get(worker.port, 0) + n
    print(f"{app_id}: successful tasks per executor {per_executor}, per worker port {per_worker}")
    assert "driver" not in per_executor, "tasks ran in the driver: not a cluster run"
    assert sorted(per_worker) == sorted(w.port for w in spark_cluster.workers)
    assert all(n > 0 for n in per_worker.values()), per_worker
    assert app_id in {a["id"] for a in spark_cluster.state().get("completedapps", [])}
