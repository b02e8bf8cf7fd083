"""The soak (issue 32): backfill DAG runs at once on Airflow (LocalExecutor, PostgreSQL) against a Spark standalone
cluster, for a fixed time, while the scheduler and Spark drivers are killed with SIGKILL at random; then every
output is checked against an uninterrupted run.

    make soak                                    # 30 minutes, 6 runs at once (SOAK_ARGS to change)
    .venv/bin/python scripts/soak.py --minutes 3 --days 2 --work build/soak-short   # the short one

What runs:
- PostgreSQL (scripts/postgres.sh) on 127.0.0.1:--pg-port, Airflow's metadata DB;
- a Spark standalone master on 127.0.0.1:--master-port (UI --master-ui-port) and 2 workers whose cores are
  oversubscribed so that every replay gets an executor (each application takes one core: spark.cores.max=1);
- Airflow's api-server (--airflow-port), scheduler (LocalExecutor) and dag-processor; the pool replay_spark has
  one slot per concurrent run, every task has retries (AIRFLOW__CORE__DEFAULT_TASK_RETRIES).
- `--active` event_time_backfill runs are kept running at once for `--minutes` (a new one is triggered as one
  ends): half of them replay the same range to the same output (they wait for each other's turn at the output, and
  find the range already committed by an identical run: orchestration/turn.py, committed.py),
  the others each to an output of its own (with --varied, each with other window and watermark settings). Each run replays `--days`
  days in chunks of `--partitions-per-job` (one spark-submit of `replay run --partitions A..B` each).
- Chaos, at random times (gaps of --min-gap plus an exponential, mean --kill-every seconds in all), each time a
  kind of fault drawn fewest times so far (a driver twice as often), so that a short soak meets several: kill -9 the
  scheduler with its process group (the LocalExecutor's workers, the tasks and their spark-submits with it, as a
  restarted container loses them) and start it again; kill -9 one Spark driver (the spark-submit JVM or the
  Python driver it runs); kill -9 PostgreSQL (postmaster and backends) and start it again 5-30 s later; kill -9 a
  Spark worker with its executors and start a new one 5-30 s later; or, while a chunk of DISK_OUTPUT runs, fill
  its disk (a tmpfs of its own; root only) and free it 20-60 s after that chunk's driver ended
  (tests/reliability/chaos.py).

After the time is up no run is triggered and nothing is killed; the runs still going are let finish (at most
--drain-minutes; SIGUSR1 ends the soak early, a second one the wait), the services are stopped, and the outputs
are checked:
- every committed partition (each dataset's `dt=` folder and the carried state) has the decoded content of an
  uninterrupted run of the same chunks by `replay run` (local[2]);
- no `_staging-*`, `_lock`, `_commit.json` or `_range.json` is left, no partition is half written (it has all
  five datasets or none);
- row accounting: per partition rows_read = rows_in_windows + late_rows + quarantined_rows + skipped_rows,
  rows_read = the rows of the source folder, late_rows and quarantined_rows = the rows of late_events/ and
  quarantine/; over the range, the windows' last firings hold rows_in_windows rows.
The figures (runs, partitions committed, kills, retries, refusals at the lock, waits for an output's turn, runs
that found their range already committed, wall time, anything lost) go to
`<work>/soak.json` and `<work>/soak.md`; exit 0 only if every check holds.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "reliability"), str(ROOT / "src")]

import pyarrow.parquet as pq  # noqa: E402

from airflow_env import airflow_env, prepare  # noqa: E402
from chaos import fill, free, kill_group, kill_postgres, mount_tmpfs, restart_postgres, unmount  # noqa: E402
from cluster import PYTHON, _process_env, _start as _start_spark, _stop as _stop_spark, free_port, spark_home  # noqa: E402
from decoded import digests  # noqa: E402
from liveness import Liveness  # noqa: E402

VENV_BIN = Path(sys.executable).parent
DAG_ID = "event_time_backfill"
DATASETS = ("windows", "late_events", "watermarks", "quarantine", "counts")
FIRST_DAY = "2024-01-01"
DISK_OUTPUT = "own-1"  # the output on a disk of its own, which the chaos fills up during its chunks
DISK_SIZE = "256m"
FAULT_KINDS = ("scheduler_group", "driver", "postgres", "spark_worker", "disk_full")
FAULT_WEIGHT = {"driver": 2}  # drawn twice as often as the other kinds of fault (Soak.chaos)
# The scheduler's liveness probe (Soak.probe_scheduler; the Helm chart's is every 60 s, 5 failures): probed every
# 15 s, restarted after 90 s of failures (its heartbeat then 120 s old, with the 30 s health threshold: a loaded
# machine's live scheduler heartbeats every few seconds), failures counted from its first success or 120 s after start.
LIVENESS_PERIOD, LIVENESS_BOUND, LIVENESS_STARTUP = 15.0, 90.0, 120.0
# The outputs of their own: each a different window / watermark (the shared output uses the first settings).
SETTINGS = [
    {"window": {"type": "tumbling", "size": "10s", "allowed_lateness": "2s"},
     "watermark": {"max_out_of_orderness": "500ms", "interval": "200ms", "idle_timeout": "5s"}},
    {"window": {"type": "tumbling", "size": "30s", "allowed_lateness": "5s"},
     "watermark": {"max_out_of_orderness": "1s", "interval": "500ms", "idle_timeout": "10s"}},
    {"window": {"type": "sliding", "size": "20s", "slide": "10s", "allowed_lateness": "0s"},
     "watermark": {"max_out_of_orderness": "200ms", "interval": "200ms", "idle_timeout": "3s"}},
    {"window": {"type": "tumbling", "size": "5s", "allowed_lateness": "1s"},
     "watermark": {"max_out_of_orderness": "2s", "interval": "1s", "idle_timeout": "30s"}},
]


def now() -> float:
    return time.monotonic()


class Soak:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.work = Path(args.work).resolve()
        self.rng = random.Random(args.seed)
        self.procs: dict[str, subprocess.Popen] = {}
        self.dead_groups: list[int] = []  # process groups of killed schedulers (orphans may live on in them)
        self.spark_procs: list[subprocess.Popen] = []
        self.events: list[dict] = []
        self.runs: dict[str, dict] = {}  # run_id -> {"output": name, "triggered": t}
        self.kills = {"scheduler_group": 0, "driver_jvm": 0, "driver_python": 0, "postgres": 0, "spark_worker": 0,
                      "disk_full": 0}
        self.drawn = {kind: 0 for kind in FAULT_KINDS}
        self.faults = set(args.faults.split(",")) if getattr(args, "faults", None) else set(FAULT_KINDS)
        self.undo: list[tuple[float, str, Callable[[], None]]] = []  # (when, what, how): faults to end
        self.db_down = False  # PostgreSQL killed and not started again yet
        self.restarts = 0  # schedulers killed and started again by the liveness probe (not a fault: Soak.supervise)
        self.disk_pending = False  # the disk fault drawn, waiting for a chunk of DISK_OUTPUT (Soak.pending_faults)
        self.disk_full_for: set[int] | None = None  # the disk is full: the drivers it waits for (empty: none left)
        self.disk: Path | None = None  # DISK_OUTPUT's tmpfs
        self.t0 = now()
        self.pg_dir: Path | None = None
        self.reference_procs: list[subprocess.Popen] = []
        self.stop_drain = False  # SIGUSR1: end the soak now, or stop waiting for the runs still going

    # --- logging ------------------------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        line = f"[soak {now() - self.t0:7.1f} s] {text}"
        print(line, flush=True)
        with open(self.work / "soak.log", "a") as f:
            f.write(line + "\n")

    def event(self, kind: str, **info) -> None:
        self.events.append({"t": round(now() - self.t0, 1), "kind": kind, **info})
        self.say(f"{kind} {json.dumps(info, sort_keys=True)}")

    # --- set-up ------------------------------------------------------------------------------------------------
    def prepare_data(self) -> None:
        from event_replay.samples.days import generate_days, write_days

        if os.path.ismount(self.work / "disk"):  # an earlier soak's, left by a crash
            unmount(self.work / "disk")
        if self.work.exists():
            shutil.rmtree(self.work)
        self.work.mkdir(parents=True)
        self.disk = mount_tmpfs(DISK_SIZE, self.work / "disk")
        if self.disk is None:
            self.say(f"cannot mount a tmpfs for {DISK_OUTPUT} (needs root): no disk-full faults")
        a = self.args
        self.source = self.work / "data"
        write_days(self.source, generate_days(FIRST_DAY, days=a.days, rows_per_day=a.rows_per_day, splits=3,
                                              seed=a.seed, rate=20.0))
        self.layout()
        self.say(f"source: {a.days} days x {a.rows_per_day} rows in {self.source}; outputs: {', '.join(self.outputs)}")

    def layout(self) -> None:
        """The days, the outputs and their configs (written), from the arguments."""
        a = self.args
        self.source = self.work / "data"
        first = dt.date.fromisoformat(FIRST_DAY)
        self.days = [(first + dt.timedelta(days=i)).isoformat() for i in range(a.days)]
        self.outputs = {"shared": SETTINGS[0]}
        for i in range(1, a.active - a.active // 2 + 1):
            self.outputs[f"own-{i}"] = SETTINGS[i % len(SETTINGS)] if a.varied else SETTINGS[0]
        self.configs = {name: self.write_config(name, self.output_dir(name), s) for name, s in self.outputs.items()}

    def output_dir(self, name: str) -> Path:
        """Where an output lives: DISK_OUTPUT on a disk of its own (`<work>/disk`, a tmpfs when it can be mounted:
        the chaos fills it up), the others under `<work>/out`."""
        return self.work / "disk" / name if name == DISK_OUTPUT else self.work / "out" / name

    def write_config(self, name: str, out: Path, s: dict) -> Path:
        import yaml

        cfg = {"source": {"path": str(self.source), "format": "parquet", "splits": ["p0", "p1", "p2"]},
               "watermark": {"strategy": "bounded_out_of_orderness", "emit": "periodic", **s["watermark"]},
               "window": s["window"],
               "aggregations": {"cnt": "count(*)", "total": "sum(value)", "top": "max(value)"},
               "replay": {"end_of_input": "flush"}, "output": {"path": str(out)}}
        path = self.work / "configs" / f"{name}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        return path

    def start_postgres(self) -> str:
        # Not under a 0700 folder: as root the server runs as `postgres`, which must reach its folder.
        self.pg_dir = Path(tempfile.mkdtemp(prefix="replay-soak-pg-"))
        self.pg_dir.chmod(0o755)
        proc = subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "start", str(self.pg_dir / "cluster"),
                               str(self.args.pg_port)], capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(f"postgres did not start: {proc.stderr}")
        url = proc.stdout.strip().splitlines()[-1]
        self.pg = {"host": "127.0.0.1", "port": self.args.pg_port, "user": "postgres", "dbname": "airflow"}
        self.say(f"postgresql: {url}")
        return url

    def start_spark(self) -> None:
        a = self.args
        base = self.work / "spark"
        (base / "conf").mkdir(parents=True)
        (base / "conf" / "spark-defaults.conf").write_text("spark.master.rest.enabled false\n")
        env = _process_env(base)
        spark_class = str(spark_home() / "bin" / "spark-class")
        self.master_url = f"spark://127.0.0.1:{a.master_port}"
        self.spark_procs.append(_start_spark([spark_class, "org.apache.spark.deploy.master.Master", "--host",
                                              "127.0.0.1", "--port", str(a.master_port), "--webui-port",
                                              str(a.master_ui_port)], env, base / "master.log", base))
        self.workers = [self.start_worker(i) for i in range(a.workers)]
        deadline = now() + 300
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{a.master_ui_port}/json/", timeout=5) as r:
                    alive = [w for w in json.loads(r.read())["workers"] if w["state"] == "ALIVE"]
                if len(alive) == a.workers:
                    break
            except OSError:
                pass
            if now() > deadline or any(p.poll() is not None for p in self.spark_procs):
                raise RuntimeError(f"the Spark cluster did not come up (logs in {base})")
            time.sleep(1)
        self.say(f"spark standalone: {self.master_url}, {a.workers} workers x {self.worker_cores} cores")

    def start_worker(self, i: int, log: str | None = None) -> subprocess.Popen:
        """Spark worker i (in its own process group), on new ports: also after the chaos killed it (`log`: a log
        of its own for the new start)."""
        base = self.work / "spark"
        self.worker_cores = max(1, -(-self.args.active // self.args.workers))  # each concurrent replay: one core
        (base / f"worker-{i}").mkdir(exist_ok=True)
        p = _start_spark([str(spark_home() / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker",
                          "--host", "127.0.0.1", "--port", str(free_port()), "--webui-port", str(free_port()),
                          "--cores", str(self.worker_cores), "--memory", f"{self.worker_cores * 700}m",
                          "--work-dir", str(base / f"worker-{i}"), self.master_url],
                         _process_env(base), base / (log or f"worker-{i}.log"), base)
        self.spark_procs.append(p)
        return p

    def airflow_env(self, db_url: str) -> dict[str, str]:
        a = self.args
        port = a.airflow_port
        spark_conf = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                      "spark.cores.max": "1", "spark.executor.cores": "1", "spark.executor.memory": "640m",
                      "spark.driver.memory": "768m", "spark.ui.enabled": "false",
                      "spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2",
                      "spark.pyspark.python": PYTHON, "spark.pyspark.driver.python": PYTHON}
        return airflow_env(
            self.work / "airflow", sql_alchemy_conn=db_url,
            AIRFLOW__CORE__EXECUTOR="LocalExecutor",
            AIRFLOW__CORE__PARALLELISM=str(a.active + 4),
            AIRFLOW__CORE__DEFAULT_TASK_RETRIES=str(a.retries),
            AIRFLOW__CORE__DEFAULT_TASK_RETRY_DELAY=str(a.retry_delay),
            AIRFLOW__CORE__MAX_ACTIVE_RUNS_PER_DAG=str(a.active + 2),
            AIRFLOW__API__BASE_URL=f"http://127.0.0.1:{port}",
            AIRFLOW__API__PORT=str(port),
            AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{port}/execution/",
            AIRFLOW__API_AUTH__JWT_SECRET="soak-test-jwt-secret-0123456789abcdef0123456789abcdef0123",
            AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS="True",
            AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL="10",
            AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL="3600",
            # A shared, loaded machine: a task's parse of the DAG file may take minutes, not the default 30 s.
            AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT="600",
            AIRFLOW__DAG_PROCESSOR__DAG_FILE_PROCESSOR_TIMEOUT="900",
            # A task whose process died with a killed scheduler is failed (then retried) after this long (Airflow's
            # default: shorter, a loaded machine's live tasks miss it and are killed as if dead).
            AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT="300",
            AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL="10",
            AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_THRESHOLD="30",
            AIRFLOW__SCHEDULER__ORPHANED_TASKS_CHECK_INTERVAL="30",
            # Its health check server, for the supervisor's liveness probe (Soak.probe_scheduler): a scheduler
            # that lost PostgreSQL stops heartbeating but does not exit until its running tasks have ended.
            AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK="True",
            AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_SERVER_HOST="127.0.0.1",
            AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_SERVER_PORT=str(port + 2),
            # The scheduler's log server: on a port of ours (its default, 8793, may be another Airflow's).
            AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT=str(port + 1),
            AIRFLOW_CONN_REPLAY_SPARK=f"spark://127.0.0.1:{a.master_port}?deploy-mode=client",
            REPLAY_SPARK_CONF=json.dumps(spark_conf),
            SPARK_LOCAL_IP="127.0.0.1",
        )

    def start_service(self, name: str, *args: str) -> subprocess.Popen:
        home = self.work / "airflow"
        with open(home / f"{name}.log", "ab") as out:  # own process group: the service and what it forks
            p = subprocess.Popen([str(VENV_BIN / "airflow"), *args], env=self.env, cwd=ROOT, stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self.procs[name] = p
        if name == "scheduler" and hasattr(self, "liveness"):
            self.liveness.started()
        return p

    def start_airflow(self, db_url: str) -> None:
        self.env = self.airflow_env(db_url)
        (self.work / "airflow").mkdir()
        prepare(self.env, pool_slots=self.args.active)
        self.liveness = Liveness(f"http://127.0.0.1:{self.args.airflow_port + 2}/health", period=LIVENESS_PERIOD,
                                 startup=LIVENESS_STARTUP)
        self.start_service("api-server", "api-server", "--host", "127.0.0.1", "--port", str(self.args.airflow_port))
        self.start_service("scheduler", "scheduler")
        self.start_service("dag-processor", "dag-processor")
        deadline = now() + 600
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.args.airflow_port}/api/v2/monitor/health",
                                            timeout=5) as r:
                    if r.status == 200 and self.query("SELECT 1 FROM dag WHERE dag_id = %s", DAG_ID):
                        break
            except Exception:  # noqa: BLE001 - not up yet (HTTP or the dag table)
                pass
            if now() > deadline:
                raise RuntimeError(f"Airflow did not come up (logs in {self.work / 'airflow'})")
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"airflow {name} exited ({p.returncode}); log {self.work / 'airflow'}")
            time.sleep(3)
        self.api("PATCH", f"/api/v2/dags/{DAG_ID}", {"is_paused": False})
        self.say(f"airflow: api-server :{self.args.airflow_port}, scheduler (LocalExecutor), dag-processor; "
                 f"{DAG_ID} unpaused")

    # --- Airflow and PostgreSQL ---------------------------------------------------------------------------------
    def query(self, sql: str, *params) -> list[tuple]:
        import psycopg2

        with psycopg2.connect(**self.pg, connect_timeout=10) as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    def api(self, method: str, path: str, body: dict | None = None) -> dict:
        req = urllib.request.Request(f"http://127.0.0.1:{self.args.airflow_port}{path}", method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read() or b"{}")

    def trigger(self, output: str) -> None:
        run_id = f"soak_{output}_{len(self.runs) + 1:03d}"
        conf = {"config": str(self.configs[output]), "start_date": self.days[0], "end_date": self.days[-1],
                "run_data_quality": False, "partitions_per_job": self.args.partitions_per_job}
        for attempt in range(5):
            try:
                self.api("POST", f"/api/v2/dags/{DAG_ID}/dagRuns", {"dag_run_id": run_id, "logical_date": None,
                                                                    "conf": conf})
                break
            except Exception as exc:  # noqa: BLE001 - the api-server is busy: try again
                if attempt == 4:
                    raise RuntimeError(f"cannot trigger {run_id}: {exc}") from exc
                time.sleep(5)
        self.runs[run_id] = {"output": output, "triggered": round(now() - self.t0, 1)}
        self.event("trigger", run=run_id, output=output)

    def run_states(self) -> dict[str, str]:
        rows = self.query("SELECT run_id, state FROM dag_run WHERE dag_id = %s", DAG_ID)
        return {r: s for r, s in rows if r in self.runs}

    # --- chaos ---------------------------------------------------------------------------------------------------
    def drivers(self) -> list[tuple[int, str, str]]:
        """(pid, 'driver_jvm' | 'driver_python', command line) of every running replay Spark driver."""
        found = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                cmd = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            text = b" ".join(cmd).decode(errors="replace")
            if "jobs/replay_job.py" not in text or str(self.work) not in text:  # ours only (the config's path)
                continue
            if "org.apache.spark.deploy.SparkSubmit" in text:
                found.append((int(d.name), "driver_jvm", text))
            elif "python" in Path(cmd[0].decode(errors="replace")).name and "spark-submit" not in text:
                found.append((int(d.name), "driver_python", text))
        return found

    def chaos(self) -> None:
        """One fault, of a kind drawn fewest times so far (ties at random): a short soak's few faults are of as many
        kinds, and a long one meets every kind (drawn purely at random, the short soaks of 2026-11-27/28 drew only
        the scheduler and PostgreSQL). A driver counts half (FAULT_WEIGHT): a killed scheduler takes every running
        task along (the next one resets them: Airflow's LocalExecutor cannot adopt another scheduler's tasks), so
        drivers are killed alone twice as often. A driver is drawn only when one runs. The disk is filled only while a
        chunk of its output runs (its task's job meets the full disk): drawn between two of them, it waits for the
        next one (`pending_faults`; a short soak's chunks of one output run a fraction of the time)."""
        drivers = self.drivers()
        kinds = ["scheduler_group", "postgres", "spark_worker"] + (["driver"] if drivers else [])
        if self.disk is not None and not self.disk_pending and self.disk_full_for is None:
            kinds.append("disk_full")
        kinds = [kind for kind in kinds if kind in self.faults]
        if not kinds:  # --faults names only kinds that cannot happen now (no driver runs): none this time
            return
        score = {kind: self.drawn[kind] / FAULT_WEIGHT.get(kind, 1) for kind in kinds}
        what = self.rng.choice([kind for kind in kinds if score[kind] == min(score.values())])
        self.drawn[what] += 1
        if what == "disk_full" and not self.disk_chunk_runs(drivers):
            self.disk_pending = True
            self.event("fault_pending", target="disk_full", until=f"a chunk of {DISK_OUTPUT} runs")
            return
        getattr(self, f"fault_{what}")(drivers)

    def disk_chunk_runs(self, drivers: list[tuple[int, str, str]]) -> bool:
        """A driver of DISK_OUTPUT runs (its config, in the output's run folder, is on the disk)."""
        return self.disk is not None and any(str(self.disk) in text for _, _, text in drivers)

    def pending_faults(self) -> None:
        """A disk fault drawn between two chunks of its output: caused once the next one runs. A full disk: freed
        20-60 s after the drivers it was filled under have ended."""
        if self.disk_full_for and not any(Path(f"/proc/{pid}").exists() for pid in self.disk_full_for):
            self.disk_full_for = set()  # still full; no longer waiting for a driver
            self.event("fault_chunk_ended", target="disk_full")
            self.later(self.rng.uniform(20, 60), "disk freed", self.free_disk)
        if self.disk_pending:
            drivers = self.drivers()
            if self.disk_chunk_runs(drivers):
                self.disk_pending = False
                self.fault_disk_full(drivers)

    def later(self, seconds: float, what: str, how: Callable[[], None]) -> None:
        self.undo.append((now() + seconds, what, how))

    def end_faults(self, every: bool = False) -> None:
        """End the faults whose time has come (`every`: all of them, as the soak time is up)."""
        if every and self.disk_full_for is not None and not any(u[1] == "disk freed" for u in self.undo):
            self.free_disk()  # full and still waiting for its chunk to end
            self.event("fault_ended", what="disk freed")
        for item in sorted(self.undo, key=lambda u: u[0]):
            if every or now() >= item[0]:
                self.undo.remove(item)
                item[2]()
                self.event("fault_ended", what=item[1])

    def fault_driver(self, drivers: list[tuple[int, str, str]]) -> None:
        pid, kind, _ = self.rng.choice(drivers)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        self.kills[kind] += 1
        self.event("kill", target=kind, pid=pid)

    def fault_scheduler_group(self, drivers: list[tuple[int, str, str]]) -> None:
        # The scheduler with its whole process group (its LocalExecutor workers, their tasks and spark-submits), as a
        # restarted container or host loses them. Its main process alone is not killed: its forked workers would
        # keep its database connection open, and with it the transaction holding its DAG runs' rows locked, so no
        # scheduler would ever schedule those runs again (seen in a trial; no deployment kills a parent alone).
        pid = self.kill_scheduler()
        self.kills["scheduler_group"] += 1
        self.event("kill", target="scheduler_group", pid=pid)
        time.sleep(self.rng.uniform(2, 15))
        q = self.start_service("scheduler", "scheduler")
        self.event("restart", target="scheduler", pid=q.pid)

    def kill_scheduler(self) -> int:
        """SIGKILL to the scheduler's process group (it, its LocalExecutor workers, their tasks and spark-submits,
        its log and health check servers); returns its pid once it is reaped."""
        p = self.procs["scheduler"]
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        return p.pid

    def fault_postgres(self, drivers: list[tuple[int, str, str]]) -> None:
        """The metadata database dies (postmaster and backends at once) and comes back 5-30 s later: Airflow's
        services and tasks lose it meanwhile (the Spark jobs do not need it)."""
        pid = kill_postgres(self.pg_dir / "cluster")
        self.db_down = True
        self.kills["postgres"] += 1
        self.event("kill", target="postgres", pid=pid)
        self.later(self.rng.uniform(5, 30), "postgres started again", self.restart_postgres)

    def restart_postgres(self) -> None:
        restart_postgres(self.pg_dir / "cluster")
        self.db_down = False

    def fault_spark_worker(self, drivers: list[tuple[int, str, str]]) -> None:
        """A Spark worker's host is lost (the Worker JVM and its executors) and a new one joins 5-30 s later."""
        i = self.rng.randrange(len(self.workers))
        kill_group(self.workers[i].pid)
        self.workers[i].wait()
        self.kills["spark_worker"] += 1
        self.event("kill", target="spark_worker", worker=i, pid=self.workers[i].pid)
        n = self.kills["spark_worker"]
        self.later(self.rng.uniform(5, 30), f"spark worker {i} started again",
                   lambda: self.workers.__setitem__(i, self.start_worker(i, log=f"worker-{i}-{n}.log")))

    def fault_disk_full(self, drivers: list[tuple[int, str, str]]) -> None:
        """DISK_OUTPUT's disk fills up during one of its chunks and stays full until that chunk's driver has ended,
        then 20-60 s more (`pending_faults`): the chunk meets it at its next write, and the task's first retries meet
        it too, then not. (Freed after a fixed 20-60 s, a chunk that computed for minutes before writing met no full
        disk at all: the short soak of 2026-11-28 09:00 filled it 3 times, and its chunks committed untouched.)"""
        fill(self.disk)
        self.disk_full_for = {pid for pid, _, text in drivers if str(self.disk) in text}
        self.kills["disk_full"] += 1
        self.event("fault", target="disk_full", disk=str(self.disk), until_ended=sorted(self.disk_full_for))
        if not self.disk_full_for:  # its chunk's driver was gone already
            self.later(self.rng.uniform(20, 60), "disk freed", self.free_disk)

    def free_disk(self) -> None:
        free(self.disk)
        self.disk_full_for = None

    # --- the soak ------------------------------------------------------------------------------------------------
    def soak(self) -> None:
        a = self.args
        shared_slots = a.active // 2
        own = [o for o in self.outputs if o != "shared"]
        end = now() + a.minutes * 60
        self.soak_start = now()
        next_kill = now() + a.min_gap + self.rng.expovariate(1 / max(1.0, a.kill_every - a.min_gap))
        while now() < end and not self.stop_drain:
            self.end_faults()
            if self.db_down:  # nothing to ask Airflow until its database is back
                time.sleep(2)
                continue
            states = self.run_states()
            active = [r for r in self.runs if states.get(r) not in ("success", "failed")]
            by_output = {}
            for r in active:
                by_output.setdefault(self.runs[r]["output"], []).append(r)
            for _ in range(shared_slots - len(by_output.get("shared", []))):
                self.trigger("shared")
            for o in own:
                if not by_output.get(o):
                    self.trigger(o)
            self.pending_faults()
            if now() >= next_kill:
                self.chaos()
                # At least --min-gap between two kills: a scheduler started again needs a while (tens of seconds on
                # a loaded machine) before it schedules anything; killed sooner, nothing would run at all.
                next_kill = now() + a.min_gap + self.rng.expovariate(1 / max(1.0, a.kill_every - a.min_gap))
            self.supervise()
            time.sleep(5)
        if self.disk_pending:
            self.event("fault_dropped", target="disk_full", why=f"no chunk of {DISK_OUTPUT} ran before the soak's end")
            self.disk_pending = False
        if self.stop_drain:  # SIGUSR1 during the soak: it ends now (the next SIGUSR1 ends the drain)
            self.event("soak_stopped", by="SIGUSR1")
            self.stop_drain = False
        self.end_faults(every=True)
        self.soak_seconds = now() - self.soak_start
        self.say(f"soak time up ({self.soak_seconds / 60:.1f} min): no more triggers or kills; draining")
        deadline = now() + a.drain_minutes * 60
        while now() < deadline and not self.stop_drain:
            states = self.run_states()
            if all(states.get(r) in ("success", "failed") for r in self.runs):
                break
            self.supervise()
            time.sleep(10)
        if self.stop_drain:
            self.event("drain_stopped", by="SIGUSR1")
        self.drain_seconds = now() - self.soak_start - self.soak_seconds

    def supervise(self) -> None:
        """A service that ended by itself (not killed by the chaos): said, and started again; the scheduler also
        once its liveness probe has failed for LIVENESS_BOUND seconds."""
        for name, p in list(self.procs.items()):
            if p.poll() is not None:
                self.event("service_exited", service=name, rc=p.returncode)
                args = ("api-server", "--host", "127.0.0.1", "--port", str(self.args.airflow_port)) \
                    if name == "api-server" else (name,)
                self.start_service(name, *args)
        self.probe_scheduler()

    def probe_scheduler(self) -> None:
        """The liveness probe (tests/reliability/liveness.py), as Kubernetes restarts a scheduler pod whose probe
        fails: a scheduler not heartbeating for LIVENESS_BOUND seconds past Airflow's health threshold is killed
        with its group and started again. What it ends: a scheduler whose loop lost PostgreSQL, stalled in
        LocalExecutor.end until its running tasks end (6-11 minutes in the soaks before); the next scheduler resets
        those tasks, as after the chaos's scheduler kill, and their retries go on after their last committed
        partition."""
        was_up, was_failing = self.liveness.up, self.liveness.failing_since is not None
        ok = self.liveness.probe()
        if ok and not was_up:
            self.event("scheduler_up", pid=self.procs["scheduler"].pid)
        if self.liveness.failing_since is not None and not was_failing:
            self.event("scheduler_not_heartbeating", pid=self.procs["scheduler"].pid)
        elif ok is False and self.liveness.failing_for() >= LIVENESS_BOUND:
            pid = self.kill_scheduler()
            self.restarts += 1
            self.event("kill", target="scheduler_unhealthy", pid=pid,
                       failing_for=round(self.liveness.failing_for()))
            q = self.start_service("scheduler", "scheduler")
            self.event("restart", target="scheduler", pid=q.pid, why="liveness probe")

    def stop(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        for pgid in [p.pid for p in self.procs.values()] + self.dead_groups:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _stop_spark(self.spark_procs)
        self.spark_procs = []

    def kill_references(self) -> None:
        """The soak is stopped before its end: the uninterrupted runs still going end too."""
        for p in self.reference_procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        # A driver orphaned by a killed scheduler group is in no group of ours any more: end it too.
        for pid, _, _ in self.drivers():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def release_disk(self) -> None:
        """DISK_OUTPUT's tmpfs freed and unmounted, what it holds kept at the same path (the checks, --check-only)."""
        if self.disk is not None:
            free(self.disk)
            unmount(self.disk, keep=True)
            self.disk = None

    def stop_postgres(self) -> None:
        if self.pg_dir is not None:
            subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "stop", str(self.pg_dir / "cluster")],
                           capture_output=True, timeout=120)
            shutil.rmtree(self.pg_dir, ignore_errors=True)
            self.pg_dir = None

    # --- figures from Airflow ------------------------------------------------------------------------------------
    def airflow_figures(self) -> dict:
        states = self.run_states()
        tis = self.query("SELECT run_id, task_id, state, try_number FROM task_instance WHERE dag_id = %s", DAG_ID)
        tis = [t for t in tis if t[0] in self.runs]
        history = self.query("SELECT count(*) FROM task_instance_history WHERE dag_id = %s AND run_id LIKE 'soak_%%'",
                             DAG_ID)[0][0]
        logs = "\n".join(p.read_text(errors="replace") for p in (self.work / "airflow" / "logs").rglob("*.log"))
        return {
            "runs_triggered": len(self.runs),
            "runs_succeeded": sum(1 for r in self.runs if states.get(r) == "success"),
            "runs_failed": sorted(r for r in self.runs if states.get(r) == "failed"),
            "runs_unfinished": sorted(r for r in self.runs if states.get(r) not in ("success", "failed")),
            "runs_per_output": {o: sum(1 for r in self.runs.values() if r["output"] == o) for o in self.outputs},
            "task_retries": sum(max(0, (t[3] or 1) - 1) for t in tis),
            "replay_task_retries": sum(max(0, (t[3] or 1) - 1) for t in tis if t[1] == "replay_partitions"),
            "task_tries_in_history": history,
            "partition_commits": len(re.findall(r"replay: partition \d+ of \d+ \S+.*committed in", logs)),
            "lock_refusals": len(re.findall(r"replay: refused: output .* is locked by pid", logs)),
            "turn_waits": len(re.findall(r"waiting for run \S+ \(DAG \S+\): it holds the output", logs)),
            "driver_waits": len(re.findall(r"waiting for pid \d+ on \S+ .*: it holds the job's lock", logs)),
            "runs_already_committed": len(re.findall(r"nothing replayed: all \d+ partitions are already committed",
                                                     logs)),
            "chunks_already_committed": len(re.findall(r"job \d+ of \d+: \S+ \(\d+ partitions?\) already committed by "
                                                       r"run \S+ .*: skipped", logs)),
            "stale_commits_rolled_forward": len(re.findall(r"rolled forward the interrupted commit", logs)),
            "orphan_staging_removed": len(re.findall(r"removed _staging-\S+ \(left by a run", logs)),
            "ranges_resumed": len(re.findall(r"replay: resuming \S+ after", logs)),
        }

    # --- the checks ----------------------------------------------------------------------------------------------
    def start_references(self) -> None:
        """The uninterrupted runs, in a thread from the start (beside the services' start-up): the end only compares."""
        import threading

        self.ref_error: BaseException | None = None

        def work():
            try:
                for name in self.outputs:
                    self.reference(name)
            except BaseException as exc:  # noqa: BLE001 - said when the checks need it
                self.ref_error = exc

        self.ref_thread = threading.Thread(target=work, name="references", daemon=True)
        self.ref_thread.start()

    def reference_of(self, name: str) -> Path:
        thread = getattr(self, "ref_thread", None)
        if thread is not None:
            thread.join()
            if self.ref_error is not None:
                raise self.ref_error
        return self.reference(name)

    def reference(self, name: str) -> Path:
        """The same chunks as the DAG plans them, by `replay run` on local[2], never interrupted (once: a done
        marker beside it)."""
        # One uninterrupted run per distinct window/watermark settings: outputs with the same settings share it.
        name = next(n for n, v in self.outputs.items() if v == self.outputs[name])
        out = self.work / "reference" / name
        done = out.with_name(f"{name}.done")
        if done.exists():
            return out
        cfg = self.write_config(f"reference-{name}", out, self.outputs[name])
        n = self.args.partitions_per_job
        chunks = [self.days[i:i + n] for i in range(0, len(self.days), n)]
        for k, chunk in enumerate(chunks):
            args = ["--partitions", f"{chunk[0]}..{chunk[-1]}", "--end-of-input",
                    "flush" if k == len(chunks) - 1 else "hold"]
            args += ["--first"] if k == 0 else ["--previous", chunks[k - 1][-1]]
            proc = subprocess.Popen([str(VENV_BIN / "replay"), "run", "--config", str(cfg), "--master", "local[2]",
                                     "--conf", "spark.sql.shuffle.partitions=4", "--conf", "spark.ui.enabled=false",
                                     *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env={**os.environ, "PYSPARK_PYTHON": PYTHON}, start_new_session=True)
            self.reference_procs.append(proc)  # ended if the soak is stopped meanwhile (kill_references)
            _, err = proc.communicate(timeout=3600)
            if proc.returncode != 0:
                raise RuntimeError(f"reference run of {name} {args} failed:\n{err[-4000:]}")
        done.touch()
        return out

    def check_output(self, name: str) -> dict:
        out = self.output_dir(name)
        problems: list[str] = []
        left = sorted(p.name for p in out.iterdir() if p.name.startswith("_") and p.name not in ("_state", "_airflow")) \
            if out.is_dir() else ["(no output folder)"]
        if left:
            problems.append(f"left over: {', '.join(left)}")
        committed = []
        for day in self.days:
            present = [ds for ds in DATASETS if (out / ds / f"dt={day}").is_dir()]
            if present and len(present) != len(DATASETS):
                problems.append(f"dt={day} half written: only {', '.join(present)}")
            if present:
                committed.append(day)
        ref = digests(self.reference_of(name))
        got = digests(out)
        differing = []
        for day in committed:
            want = {k: v for k, v in ref.items() if f"dt={day}" in k.split("/") or k == f"_state/{day}"}
            have = {k: v for k, v in got.items() if f"dt={day}" in k.split("/") or k == f"_state/{day}"}
            if want != have:
                differing.append(day)
        if differing:
            problems.append(f"differs from the uninterrupted run: {', '.join(differing)}")
        missing = [d for d in self.days if d not in committed]
        state_extra = sorted(k for k in got if k.startswith("_state") and k not in ref)
        if state_extra:
            problems.append(f"carried state the uninterrupted run does not have: {', '.join(state_extra)}")
        accounting = self.accounting(out, committed)
        problems += accounting.pop("problems")
        return {"committed": committed, "missing": missing, "differing": differing, "accounting": accounting,
                "problems": problems}

    def accounting(self, out: Path, days: list[str]) -> dict:
        problems = []
        total_in_windows = 0
        for day in days:
            c = pq.read_table(out / "counts" / f"dt={day}").to_pylist()
            if len(c) != 1:
                problems.append(f"dt={day}: {len(c)} counts rows")
                continue
            c = c[0]
            total_in_windows += c["rows_in_windows"]
            source_rows = sum(pq.ParquetFile(f).metadata.num_rows for f in (self.source / f"dt={day}").glob("*.parquet"))
            late = pq.read_table(out / "late_events" / f"dt={day}").num_rows
            quarantined = pq.read_table(out / "quarantine" / f"dt={day}").num_rows
            if c["rows_read"] != c["rows_in_windows"] + c["late_rows"] + c["quarantined_rows"] + c["skipped_rows"]:
                problems.append(f"dt={day}: rows_read {c['rows_read']} != in windows + late + quarantined + skipped")
            if c["rows_read"] != source_rows:
                problems.append(f"dt={day}: rows_read {c['rows_read']} but the source folder has {source_rows}")
            if (late, quarantined) != (c["late_rows"], c["quarantined_rows"]):
                problems.append(f"dt={day}: late/quarantined outputs {late}/{quarantined} != counts "
                                f"{c['late_rows']}/{c['quarantined_rows']}")
        held = None
        tumbling = self.outputs[out.name]["window"]["type"] == "tumbling"  # a row is in one window only
        if days == self.days and tumbling:  # the whole range (flushed): the last firings hold every row in windows
            import pyarrow.compute as pc

            w = pq.read_table(out / "windows", columns=["key", "window_start", "window_end", "fire_index", "cnt"])
            last = w.group_by(["key", "window_start", "window_end"]).aggregate([("fire_index", "max")])
            joined = last.join(w, ["key", "window_start", "window_end"])
            held = pc.sum(joined.filter(pc.equal(joined["fire_index"], joined["fire_index_max"]))["cnt"]).as_py() or 0
            if held != total_in_windows:
                problems.append(f"the windows' last firings hold {held} rows, counts say {total_in_windows}")
        return {"rows_in_windows": total_in_windows, "held_by_last_firings": held, "problems": problems}

    def check_run_reports(self) -> list[str]:
        """Every successful run's report (report.json, written by its report task) says every partition complete."""
        problems = []
        for run_id, r in self.runs.items():
            report = self.output_dir(r["output"]) / "_airflow" / run_id / "report.json"
            if report.exists():
                rep = json.loads(report.read_text())
                if not rep.get("complete"):
                    problems.append(f"{run_id}: report says incomplete")
        return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=30.0)
    p.add_argument("--active", type=int, default=6, help="DAG runs at once (half on one shared output)")
    p.add_argument("--days", type=int, default=4)
    p.add_argument("--rows-per-day", type=int, default=400)
    p.add_argument("--partitions-per-job", type=int, default=2)
    p.add_argument("--kill-every", type=float, default=180.0, help="mean seconds between two kills")
    p.add_argument("--min-gap", type=float, default=120.0, help="seconds at least between two kills")
    p.add_argument("--retries", type=int, default=30)
    p.add_argument("--retry-delay", type=int, default=15)
    p.add_argument("--drain-minutes", type=float, default=15.0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=32)
    p.add_argument("--faults", default=None,
                   help=f"the kinds of fault to draw from, comma-separated (default: all of {','.join(FAULT_KINDS)})")
    p.add_argument("--work", default=str(ROOT / "build" / "soak"))
    p.add_argument("--airflow-port", type=int, default=8290)
    p.add_argument("--pg-port", type=int, default=5442)
    p.add_argument("--master-port", type=int, default=7177)
    p.add_argument("--master-ui-port", type=int, default=8277)
    p.add_argument("--varied", action="store_true",
                   help="the outputs of their own get other window and watermark settings (one more reference each)")
    p.add_argument("--check-only", action="store_true",
                   help="only check the outputs of a soak that ran in --work (from its soak-partial.json)")
    args = p.parse_args(argv)
    if args.active < 2:
        p.error("--active must be at least 2 (half of the runs share an output)")
    if args.faults and not set(args.faults.split(",")) <= set(FAULT_KINDS):
        p.error(f"--faults: kinds of {', '.join(FAULT_KINDS)}")
    if args.check_only:
        return check_only(args)
    s = Soak(args)

    def stop_on_signal(signum, frame):  # SIGTERM (and SIGINT in the background): stop everything we started
        raise KeyboardInterrupt(f"signal {signum}")

    def end_drain(signum, frame):
        s.stop_drain = True

    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGINT, stop_on_signal)
    signal.signal(signal.SIGUSR1, end_drain)
    s.prepare_data()
    s.start_references()
    started = dt.datetime.now(dt.timezone.utc)
    result: dict = {"command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
                    "started_utc": started.isoformat(timespec="seconds"), "args": vars(args)}
    try:
        db_url = s.start_postgres()
        s.start_spark()
        s.start_airflow(db_url)
        s.soak()
        result["airflow"] = s.airflow_figures()
    except BaseException:
        s.kill_references()
        raise
    finally:
        s.stop()
        s.stop_postgres()
        s.release_disk()
    result["kills"] = dict(s.kills)
    result["scheduler_restarts_by_probe"] = s.restarts
    result["scheduler_down_after_postgres"] = scheduler_down_after_postgres(s.events)
    result["soak_minutes"] = round(s.soak_seconds / 60, 1)
    result["drain_minutes"] = round(s.drain_seconds / 60, 1)
    result["services_minutes"] = round((now() - s.t0) / 60, 1)
    # What the checks need, saved first: they can be run again alone (--check-only).
    (s.work / "soak-partial.json").write_text(json.dumps({**result, "runs": s.runs, "events": s.events},
                                                         indent=1, default=str) + "\n")
    return finish(s, result)


def check_only(args: argparse.Namespace) -> int:
    saved = json.loads((Path(args.work) / "soak-partial.json").read_text())
    s = Soak(argparse.Namespace(**{**saved["args"], "work": args.work}))
    s.layout()
    s.runs, s.events = saved["runs"], saved["events"]
    result = {k: v for k, v in saved.items() if k not in ("runs", "events")}
    s.t0 = now() - 60 * result["services_minutes"]
    return finish(s, result)


def finish(s: Soak, result: dict) -> int:
    s.say("services stopped; checking every output against an uninterrupted run")
    checks = {name: s.check_output(name) for name in s.outputs}
    result["outputs"] = checks
    report_problems = s.check_run_reports()
    result["wall_minutes"] = round((now() - s.t0) / 60, 1)
    lost = sum(len(c["differing"]) for c in checks.values())
    problems = [f"{n}: {x}" for n, c in checks.items() for x in c["problems"]] + report_problems
    fig = result["airflow"]
    if fig["runs_unfinished"]:
        problems.append(f"runs still unfinished after the drain: {', '.join(fig['runs_unfinished'])}")
    for name, c in checks.items():
        done = set(fig["runs_failed"]) | set(fig["runs_unfinished"])  # not succeeded: said above, or failed
        if c["missing"] and any(s.runs[r]["output"] == name and r not in done for r in s.runs):
            problems.append(f"{name}: partitions never committed although a run succeeded: {', '.join(c['missing'])}")
    result["partitions_lost_or_wrong"] = lost
    result["problems"] = problems
    result["ok"] = not problems
    (s.work / "soak.json").write_text(json.dumps({**result, "events": s.events}, indent=1, default=str) + "\n")
    (s.work / "soak.md").write_text(render(result))
    print(render(result), flush=True)
    return 0 if result["ok"] else 1


def scheduler_down_after_postgres(events: list[dict]) -> list[float | None]:
    """Per PostgreSQL kill: seconds from the kill until a scheduler started again after it (by the liveness probe,
    or after it exited) was up (its probe's first 200); 0 if the next fault came with the scheduler neither stopped
    heartbeating nor started again (it went on); None if none came up before the soak ended."""
    downs: list[float | None] = []
    for i, e in enumerate(events):
        if e["kind"] != "kill" or e.get("target") != "postgres":
            continue
        restarted = stalled = False
        down = None
        for f in events[i + 1:]:
            restarted = restarted or (f["kind"] == "restart" and f.get("target") == "scheduler") or \
                (f["kind"] == "service_exited" and f.get("service") == "scheduler")
            stalled = stalled or f["kind"] == "scheduler_not_heartbeating"
            if f["kind"] == "scheduler_up" and restarted:
                down = round(f["t"] - e["t"])
                break
            if f["kind"] in ("kill", "fault") and f.get("target") != "scheduler_unhealthy" and not (restarted or stalled):
                down = 0
                break
        downs.append(down)
    return downs


def not_drawn(kills: dict) -> list[str]:
    """The kinds of fault the soak never caused (a driver: neither its JVM nor its Python killed)."""
    drawn = {**kills, "driver": kills.get("driver_jvm", 0) + kills.get("driver_python", 0)}
    return [kind for kind in FAULT_KINDS if not drawn.get(kind)]


def render(r: dict) -> str:
    f, k = r["airflow"], r["kills"]
    lines = [f"# Soak {r['started_utc']}", "", f"command: `{r['command']}`", "",
             "| figure | value |", "|---|---|",
             f"| soak / drain / wall time | {r['soak_minutes']} / {r['drain_minutes']} / {r['wall_minutes']} min |",
             f"| DAG runs at once | {r['args']['active']} ({r['args']['active'] // 2} on one shared output) |",
             f"| DAG runs triggered / succeeded / failed | {f['runs_triggered']} / {f['runs_succeeded']} / "
             f"{len(f['runs_failed'])} |",
             f"| runs per output | {', '.join(f'{o} {n}' for o, n in f['runs_per_output'].items())} |",
             f"| partitions committed (commits in the task logs) | {f['partition_commits']} |",
             f"| kill -9 scheduler (with its group) / driver JVM / driver Python | {k['scheduler_group']} / "
             f"{k['driver_jvm']} / {k['driver_python']} |",
             f"| kill -9 PostgreSQL (restarted) / a Spark worker (restarted) / the disk of {DISK_OUTPUT} filled during "
             f"a chunk | {k.get('postgres', 0)} / {k.get('spark_worker', 0)} / {k.get('disk_full', 0)} |",
             f"| kinds of fault not drawn | {', '.join(not_drawn(k)) or 'none'} |",
             f"| schedulers restarted by the liveness probe / the scheduler's downtime per PostgreSQL kill (s) | "
             f"{r.get('scheduler_restarts_by_probe', '-')} / "
             f"{', '.join('-' if d is None else str(d) for d in r.get('scheduler_down_after_postgres', [])) or '-'} |",
             f"| task retries (all tasks / replay_partitions) | {f['task_retries']} / {f['replay_task_retries']} |",
             f"| refusals at the lock / waits for an output's turn / for a driver left holding the lock | "
             f"{f['lock_refusals']} / {f.get('turn_waits', '-')} / {f.get('driver_waits', '-')} |",
             f"| runs that found their range already committed (nothing replayed) / chunks skipped as already "
             f"committed by an identical run | {f.get('runs_already_committed', '-')} / "
             f"{f.get('chunks_already_committed', '-')} |",
             f"| interrupted commits rolled forward / orphan staging removed / ranges resumed | "
             f"{f['stale_commits_rolled_forward']} / {f['orphan_staging_removed']} / {f['ranges_resumed']} |",
             f"| partitions lost or differing from an uninterrupted run | {r['partitions_lost_or_wrong']} |", ""]
    for name, c in r["outputs"].items():
        lines.append(f"- `{name}`: {len(c['committed'])} partitions committed, rows in windows "
                     f"{c['accounting']['rows_in_windows']} (last firings hold {c['accounting']['held_by_last_firings']})"
                     f"{'; ' + '; '.join(c['problems']) if c['problems'] else ', every check holds'}")
    lines += ["", f"verdict: {'OK' if r['ok'] else 'FAILED: ' + '; '.join(r['problems'])}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
