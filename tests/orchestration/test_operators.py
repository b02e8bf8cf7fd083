"""The Airflow operators that spark-submit the run's jobs (orchestration/operators.py; the conf every submit carries
and the hook itself: test_submit_hook.py): the data_quality task, which runs where the data is: one spark-submit of
`jobs/replay_job.py quality` through the `replay_spark` connection (here the real local spark-submit, master
local[*]), which writes data_quality.json into the run folder; the task reads only that file. The worker process
never starts Spark itself."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from backfill_cases import RunTI
from event_replay.semantics.config import to_raw
from quality_outputs import read_frames, write_case, write_frames
from strategies import random_case

ROOT = Path(__file__).resolve().parents[2]


def spark_job(test):
    """A test that spark-submits GX jobs: a minute a job."""
    return pytest.mark.spark(pytest.mark.integration(pytest.mark.timeout(600)(test)))


def _seed() -> int:
    from event_replay.semantics.reference import replay

    for seed in range(3000):
        c = random_case(seed)
        if c.cfg.window.type == "tumbling" and c.cfg.replay.end_of_input == "flush" and len(c.rows) >= 30 \
                and len(replay(c.rows, c.cfg, declared_splits=c.declared_splits).firings) >= 3:
            return seed
    raise AssertionError("no generated case fits")


@pytest.fixture
def worker(monkeypatch):
    """The worker's environment: the connection as the DAGs' tests set it, and no Spark in this process."""
    import event_replay.spark

    monkeypatch.setenv("AIRFLOW_CONN_REPLAY_SPARK", json.dumps({"conn_type": "spark", "host": "local[*]"}))
    monkeypatch.setenv("REPLAY_SPARK_CONF", json.dumps({"spark.sql.shuffle.partitions": "4",
                                                        "spark.default.parallelism": "2"}))

    def no_local_spark(*a, **k):
        raise AssertionError("the worker started a Spark session")

    monkeypatch.setattr(event_replay.spark, "build_session", no_local_spark)
    for caller in ("quality.validation", "quality_job", "why.report"):  # the names they call (imported at the top)
        monkeypatch.setattr(f"event_replay.{caller}.build_session", no_local_spark)
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    commands = []
    real = SparkSubmitHook.submit

    def recorded(self, application="", **kwargs):
        commands.append(self._build_spark_submit_command(application))
        return real(self, application, **kwargs)

    monkeypatch.setattr(SparkSubmitHook, "submit", recorded)
    return commands


def _run(out: Path, cfg, tmp_path: Path, warn_only: bool):
    from event_replay.orchestration.operators import DataQualityOperator

    raw = to_raw(cfg)
    raw["output"]["path"] = str(out)
    config = tmp_path / f"job-{out.name}.yaml"
    config.write_text(yaml.safe_dump(raw))
    run_dir = tmp_path / f"run-{out.name}"
    run_dir.mkdir()
    planned = {"plan": {"runs": [{"partition": "2024-01-01", "first": True, "end_of_input": "flush",
                                  "previous": None, "missing": False}], "missing": []},
               "run_dir": str(run_dir), "config_path": str(config), "output_path": str(out), "dq_warn_only": warn_only}
    op = DataQualityOperator(task_id="data_quality", plan_task_id="plan", project_dir=str(ROOT))
    ti = RunTI({"replay_partitions": ("success", 1.0)}, {("plan", "return_value"): planned})
    context = {"ti": ti, "params": {"run_data_quality": True}, "run_id": "manual__dq-test"}
    return op, context, run_dir


@spark_job
def test_data_quality_is_a_spark_job_whose_json_the_task_reads(worker, tmp_path):
    from event_replay.orchestration.tasks import data_quality_result

    seed = _seed()
    good = tmp_path / "good"
    cfg, _ = write_case(random_case(seed), good)

    op, context, run_dir = _run(good, cfg, tmp_path, warn_only=False)
    dq = op.execute(context)
    (cmd,) = worker
    assert cmd[0] == "spark-submit" and cmd[cmd.index("--master") + 1] == "local[*]"
    assert cmd[cmd.index("--name") + 1] == "event-replay-dq"
    app = cmd.index(str(ROOT / "jobs" / "replay_job.py"))
    assert cmd[app + 1:] == ["quality", "--config", str(tmp_path / "job-good.yaml"), "--out", str(run_dir.resolve()),
                             "--run-name", "manual__dq-test"]
    result = json.loads((run_dir / "data_quality.json").read_text())
    assert result["success"] and result["expectations"] > 0 and result["failed"] == 0, f"seed {seed}: {result}"
    assert dq == {"status": f"passed ({result['expectations']} expectations)",
                  "data_docs": str(run_dir.resolve() / "_data_docs" / "index.html"),
                  "why_report": str(run_dir.resolve() / "why_report" / "index.html"),
                  "spark_jobs": result["spark_jobs"]}  # what each report cost (quality_job.py)
    assert result["spark_jobs"]["gx_suites"] > 0 and result["spark_jobs"]["why_report"] > 0
    assert Path(dq["data_docs"]).is_file() and (run_dir / "why_report" / "summary.json").is_file()
    assert not (good / "_data_docs").exists() and not (good / "why_report").exists()  # the run's own folder

    # A broken output: the job still ends well (it wrote its result); the task fails, naming the expectation.
    broken = tmp_path / "broken"
    shutil.copytree(good, broken)
    frames = read_frames(good)
    frames["counts"].loc[0, "skipped_rows"] += 1
    write_frames(broken, frames, like=good)
    op, context, run_dir = _run(broken, cfg, tmp_path, warn_only=False)
    from event_replay.orchestration.failures import Failed  # one line, no traceback (failures.py)

    with pytest.raises(Failed, match=r"data quality FAILED 1/\d+: expect_every_row_accounted_for"):
        op.execute(context)
    assert len(worker) == 2
    result = json.loads((run_dir / "data_quality.json").read_text())
    assert not result["success"] and result["failed_names"] == ["expect_every_row_accounted_for"], result
    # dq_warn_only: the same result only warns, and the report still gets the links.
    warned = data_quality_result(result, warn_only=True)
    assert warned["status"] == f"FAILED 1/{result['expectations']}: expect_every_row_accounted_for (warn only)"
    assert warned["why_report"] == str(run_dir.resolve() / "why_report" / "index.html")


@spark_job
def test_data_quality_off_or_nothing_replayed_submits_nothing(worker, tmp_path):
    from event_replay.orchestration.operators import DataQualityOperator

    op = DataQualityOperator(task_id="data_quality", plan_task_id="plan", project_dir=str(ROOT))
    assert op.pool == "replay_spark" and op.conn_id == "replay_spark"
    planned = {"plan": {"runs": [], "missing": []}, "run_dir": str(tmp_path), "dq_warn_only": False}
    ti = RunTI({"replay_partitions": ("success", 1.0), "compare_live": ("failed", 2.0)},
               {("plan", "return_value"): planned})  # a failed comparison before it: data quality still runs
    assert op.execute({"ti": ti, "params": {"run_data_quality": False}, "run_id": "r"}) == {
        "status": "not run (run_data_quality off: no GX suites, no Data Docs, no why-report)"}
    assert op.execute({"ti": ti, "params": {"run_data_quality": True}, "run_id": "r"}) == {
        "status": "skipped (nothing replayed)"}
    assert worker == []
