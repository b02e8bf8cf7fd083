"""The backfill in jobs of `partitions_per_job` partitions (orchestration/chunks.py) and the operator's walk over
them: arguments, order, retries. The Spark job itself is recorded, not run (tests/test_range_replay.py runs it)."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from event_replay.pipeline import PartitionSpan
from event_replay.orchestration.chunks import (
    DEFAULT_PARTITIONS_PER_JOB,
    chunk_plan,
    chunk_runs,
    job_args,
    job_bytes,
    job_plans,
    partitions_per_job,
    run_bytes,
)
from event_replay.orchestration.failures import Failed
from event_replay.orchestration.plan import plan_range
from event_replay.semantics.config_keys import ConfigError

ROOT = Path(__file__).resolve().parents[2]
D = dt.date.fromisoformat


def _plan(days=7, missing=(), **kw):
    have = [(D("2024-01-01") + dt.timedelta(days=i)).isoformat() for i in range(days)]
    return plan_range([d for d in have if d not in missing], have[0], have[-1], end_of_input="flush",
                      allow_missing=bool(missing), **kw)


def test_chunks_cover_the_plan_in_order_and_continue_each_other():
    plan = _plan(7, missing=("2024-01-05",))
    chunks = chunk_runs(plan.runs, 3)
    assert [len(c) for c in chunks] == [3, 3, 1]
    assert [r for c in chunks for r in c] == list(plan.runs)
    jobs = [json.loads(j) for j in job_plans(plan.runs, 3)]
    assert jobs[0] == {"partitions": "2024-01-01..2024-01-03", "first": True, "previous": None, "end_of_input": "hold",
                       "missing": False}
    # The chunk with the missing day allows it; it continues the previous chunk's last partition.
    assert jobs[1] == {"partitions": "2024-01-04..2024-01-06", "first": False, "previous": "2024-01-03",
                       "end_of_input": "hold", "missing": True}
    assert jobs[2] == {"partitions": "2024-01-07..2024-01-07", "first": False, "previous": "2024-01-06",
                       "end_of_input": "flush", "missing": False}
    assert chunk_runs(plan.runs, 31) == [plan.runs]
    # What each job receives is the pipeline's plan of its range, read back as it was serialised.
    want = PartitionSpan.between("2024-01-04", "2024-01-06", first=False, previous="2024-01-03", end_of_input="hold",
                                 allow_missing=True)
    assert chunk_plan(chunks[1]) == PartitionSpan.from_dict(jobs[1]) == want
    assert job_args("/c.yaml", job_plans(plan.runs, 3)[1]) == ["--config", "/c.yaml", "--plan",
                                                               json.dumps(want.to_dict())]


def test_a_range_continuing_the_history_names_its_predecessor():
    plan = _plan(2, continue_from="2023-12-31")
    assert json.loads(job_plans(plan.runs, 5)[0])["previous"] == "2023-12-31"


@pytest.mark.parametrize("value,want", [(None, DEFAULT_PARTITIONS_PER_JOB), ("", DEFAULT_PARTITIONS_PER_JOB),
                                        (1, 1), (90, 90), ("7", 7)])
def test_partitions_per_job(value, want):
    assert partitions_per_job({"partitions_per_job": value}) == want


@pytest.mark.parametrize("value", [0, -3, 2.5, "x", True])
def test_partitions_per_job_refuses_nonsense(value):
    with pytest.raises(ConfigError, match="partitions_per_job"):
        partitions_per_job({"partitions_per_job": value})


# --- the operator's walk: one spark-submit per chunk, in order; a retry skips the chunks done ---------------------

class _TI:
    def __init__(self, planned):
        self.planned = planned

    def xcom_pull(self, task_ids):
        return self.planned


def _context(planned):
    from airflow.sdk.execution_time.context import OutletEventAccessors

    return {"ti": _TI(planned), "outlet_events": OutletEventAccessors()}


@pytest.fixture
def operator(monkeypatch, tmp_path):
    """The operator with spark-submit recorded: each job 'commits' its partitions' states, or fails on demand."""
    from event_replay.orchestration.operators import ReplayPartitionsOperator
    from event_replay.orchestration.submit_hook import JobFailed, ReplaySubmitHook

    submitted, fail_on, java_options = [], set(), []

    def fake_submit(self, application="", **kwargs):
        args = list(self.replay_args)
        submitted.append(json.loads(args[args.index("--plan") + 1])["partitions"])
        java_options.append(self._conf["spark.driver.extraJavaOptions"])
        if submitted[-1] in fail_on:
            fail_on.discard(submitted[-1])
            raise JobFailed("spark-submit failed")
        lo, hi = (D(x) for x in submitted[-1].split(".."))
        for i in range((hi - lo).days + 1):
            (tmp_path / "out" / "_state" / (lo + dt.timedelta(days=i)).isoformat()).mkdir(parents=True)
            (tmp_path / "out" / "_state" / (lo + dt.timedelta(days=i)).isoformat() / "manifest.json").touch()

    monkeypatch.setattr(ReplaySubmitHook, "submit", fake_submit)
    op = ReplayPartitionsOperator(task_id="replay_partitions", plan_task_id="plan", project_dir=str(ROOT))
    op.java_options = java_options  # each job's driver JVM options, in order
    return op, submitted, fail_on


def test_operator_submits_one_job_per_chunk_and_a_retry_resumes(operator, tmp_path):
    op, submitted, fail_on = operator
    planned = {"plan": _plan(7).to_dict(), "run_dir": str(tmp_path / "run"), "output_path": str(tmp_path / "out"),
               "config_path": "/c.yaml", "partitions_per_job": 3, "jobs": job_plans(_plan(7).runs, 3)}
    context = _context(planned)
    fail_on.add("2024-01-04..2024-01-06")
    with pytest.raises(Failed, match="^the Spark job failed: spark-submit failed"):  # no traceback: a SystemExit
        op.execute(context)
    assert submitted == ["2024-01-01..2024-01-03", "2024-01-04..2024-01-06"]
    assert sorted(p.name for p in (tmp_path / "run" / "done").iterdir()) == ["2024-01-01", "2024-01-02",
                                                                             "2024-01-03"]
    # The Replay runs page's record of the job that was on (job 2 of 3) stays: the run stopped in that chunk.
    chunk = json.loads((tmp_path / "run" / "replaying.json").read_text())
    assert (chunk["job"], chunk["jobs"], chunk["partitions"]) == (2, 3, ["2024-01-04", "2024-01-05", "2024-01-06"])
    # The retry skips the first job and resubmits the failed chunk whole (the job continues after its last commit).
    submitted.clear()
    op.execute(context)
    assert submitted == ["2024-01-04..2024-01-06", "2024-01-07..2024-01-07"]
    assert len(list((tmp_path / "run" / "done").iterdir())) == 7
    assert not (tmp_path / "run" / "replaying.json").exists()  # every chunk replayed: none is on
    # The run record: what ran, and each job of this attempt with its time and rows.
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["request"]["partitions"] == [f"2024-01-0{i}" for i in range(1, 8)]
    assert [j["partitions"][0] for j in record["jobs"]] == ["2024-01-04", "2024-01-07"]
    assert all(j["seconds"] >= 0 and j["rows_read"] == 0 for j in record["jobs"])
    assert record["project"]["version"] and record["spark"]["version"]


def test_on_kill_records_the_cancel_for_the_runs_page(operator, tmp_path):
    """Marked failed while job 2 of 3 runs: on_kill leaves cancelled.json (which chunk was on) and stops the job."""
    op, submitted, _ = operator
    op._running = (str(tmp_path / "run"), 2, 3, ["2024-01-04", "2024-01-05", "2024-01-06"])
    op.on_kill()
    cancel = json.loads((tmp_path / "run" / "cancelled.json").read_text())
    assert (cancel["job"], cancel["jobs"], cancel["partitions"][0]) == (2, 3, "2024-01-04") and cancel["at"]


def test_operator_default_is_one_job_for_a_month(operator, tmp_path):
    op, submitted, _ = operator
    planned = {"plan": _plan(7).to_dict(), "run_dir": str(tmp_path / "run"), "output_path": str(tmp_path / "out"),
               "config_path": "/c.yaml", "jobs": job_plans(_plan(7).runs, DEFAULT_PARTITIONS_PER_JOB)}
    op.execute(_context(planned))
    assert submitted == ["2024-01-01..2024-01-07"]


def test_every_submit_ships_the_engine_extension_beside_the_users_jars(monkeypatch):
    """spark-submit starts the driver's JVM, so the engine's Spark extension (extension.py) reaches its classpath
    only through --jars; a deployment's own jars stay, and a task's second job does not add it twice."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    from event_replay import extension
    from event_replay.orchestration.operators import ReplaySparkSubmitOperator

    seen = []

    def recorded(self, application="", **kwargs):  # the command the provider would run, not run
        cmd = self._build_spark_submit_command(application)
        seen.append(cmd[cmd.index("--jars") + 1] if "--jars" in cmd else None)

    monkeypatch.setattr(SparkSubmitHook, "submit", recorded)
    monkeypatch.setattr(extension, "JAR", ROOT / "pyproject.toml")  # any file: "built"
    op = ReplaySparkSubmitOperator(task_id="t", application="app.py", jars="/opt/site/udfs.jar")
    op.submit({}, ["a"])
    op.submit({}, ["b"])
    assert seen == [f"/opt/site/udfs.jar,{ROOT / 'pyproject.toml'}"] * 2
    monkeypatch.setattr(extension, "JAR", ROOT / "no-such.jar")  # not built (no JDK): nothing to ship
    assert ReplaySparkSubmitOperator(task_id="u", application="app.py").submit({}, []) is None
    assert seen[-1] is None


def test_each_job_s_driver_is_chosen_by_what_it_reads(operator, tmp_path):
    """The planner sizes each chunk from the source's files (chunks.job_bytes); a job of a small chunk gets the
    quick compiler (driver_jvm.py), one of a large chunk Spark's default; the steps after the replay the run's."""
    from event_replay.driver_jvm import QUICK_COMPILER, SMALL_INPUT_BYTES

    source = tmp_path / "log"
    for i, size in enumerate((10, 20, SMALL_INPUT_BYTES)):  # the third day alone is at the bound
        day = tmp_path / "log" / f"dt=2024-01-0{i + 1}"
        day.mkdir(parents=True)
        (day / "part-0.parquet").write_bytes(b"x" * size)
    runs = _plan(4, missing=("2024-01-04",)).runs
    assert job_bytes(str(source), runs, 2) == [30, SMALL_INPUT_BYTES]
    assert job_bytes(str(source), runs, 3) == [30 + SMALL_INPUT_BYTES, 0]
    assert run_bytes({"job_bytes": [30, SMALL_INPUT_BYTES]}) == 30 + SMALL_INPUT_BYTES
    assert run_bytes({"job_bytes": [30, None]}) is None and run_bytes({}) is None  # a remote source: not known
    op, submitted, _ = operator
    planned = {"plan": _plan(4).to_dict(), "run_dir": str(tmp_path / "run"), "output_path": str(tmp_path / "out"),
               "config_path": "/c.yaml", "partitions_per_job": 2, "jobs": job_plans(_plan(4).runs, 2),
               "job_bytes": job_bytes(str(source), runs, 2)[:1] + [SMALL_INPUT_BYTES + 1]}
    op.execute(_context(planned))
    assert submitted == ["2024-01-01..2024-01-02", "2024-01-03..2024-01-04"]
    assert QUICK_COMPILER in op.java_options[0] and QUICK_COMPILER not in op.java_options[1]
