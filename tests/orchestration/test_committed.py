"""Already committed (orchestration/committed.py): a backfill whose every partition an identical run committed is not
replayed again, and says by which run; `force` replays anyway; other input, another config or a later commit of a
partition replay; the dry run lists them. The replay task's chunk loop is driven directly, spark-submit recorded
(each job writes its partitions' `counts` rows, as a commit does)."""
from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from event_replay.orchestration.committed import config_fingerprint
from event_replay.orchestration.chunks import job_plans
from event_replay.orchestration.plan import PlannedRuns, plan_range
from event_replay.samples.days import generate_days, write_days
from event_replay.semantics.config import load_config, to_raw

ROOT = Path(__file__).resolve().parents[2]
DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]


class TaskLog:
    """The operator's logger, kept as lines (Airflow's task logger is structlog's, out of caplog's sight)."""

    def __init__(self):
        self.lines: list[str] = []

    def info(self, msg: str, *args) -> None:
        self.lines.append(msg % args)

    warning = info


@pytest.fixture
def backfill(monkeypatch, tmp_path):
    """(planned(run_id, **changes), run(planned, run_id, **params) -> (log lines, jobs submitted))."""
    from event_replay.orchestration.submit_hook import ReplaySubmitHook

    write_days(tmp_path / "log", generate_days(DAYS[0], days=3, rows_per_day=50, splits=3, seed=1))
    raw = yaml.safe_load((ROOT / "jobs" / "configs" / "demo_partitioned.yaml").read_text())
    raw["source"]["path"], raw["output"]["path"] = str(tmp_path / "log"), str(tmp_path / "out")
    raw["source"]["splits"] = ["p0", "p1", "p2"]
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(raw))
    config_raw = to_raw(load_config(tmp_path / "job.yaml"))
    out = tmp_path / "out"
    submitted: list[str] = []

    def fake_submit(self, application="", **kwargs):  # the job commits its partitions: their counts rows and the last one's state
        args = list(self.replay_args)
        submitted.append(json.loads(args[args.index("--plan") + 1])["partitions"])
        lo, hi = (dt.date.fromisoformat(x) for x in submitted[-1].split(".."))
        for i in range((hi - lo).days + 1):
            day = (lo + dt.timedelta(days=i)).isoformat()
            (out / "counts" / f"dt={day}").mkdir(parents=True, exist_ok=True)
            (out / "counts" / f"dt={day}" / "part-0.parquet").write_bytes(b"x")
        (out / "_state" / hi.isoformat()).mkdir(parents=True, exist_ok=True)
        (out / "_state" / hi.isoformat() / "manifest.json").write_text("{}")

    monkeypatch.setattr(ReplaySubmitHook, "submit", fake_submit)
    monkeypatch.setattr("event_replay.orchestration.backfill.partition_rows_read", lambda *a: 0)

    def planned(run_id: str, **changes) -> dict:
        have = list(DAYS)  # partition ids (history/partitions.py)
        plan = plan_range(have, have[0], have[-1], end_of_input="flush")
        return {"plan": plan.to_dict(), "run_dir": str(out / "_airflow" / run_id), "output_path": str(out),
                "source_path": str(tmp_path / "log"), "config_path": None, "config_raw": config_raw,
                "partitions_per_job": 2, "start": DAYS[0], "end": DAYS[-1], "end_of_input": "flush",
                "jobs": job_plans(PlannedRuns.from_dict(changes.get("plan", plan.to_dict())).runs, 2), **changes}

    def run(p: dict, run_id: str, **params) -> tuple[list[str], list[str]]:
        from airflow.sdk.execution_time.context import OutletEventAccessors

        from event_replay.orchestration.operators import ReplayPartitionsOperator

        op = ReplayPartitionsOperator(task_id="replay_partitions", plan_task_id="plan", project_dir=str(ROOT))
        op._cached_logger = log = TaskLog()
        submitted.clear()
        ti = SimpleNamespace(xcom_pull=lambda task_ids: p, xcom_push=lambda key, value: None)
        op.execute({"ti": ti, "outlet_events": OutletEventAccessors(), "run_id": run_id, "params": params,
                    "dag_run": SimpleNamespace(dag_id="event_time_backfill")})
        time.sleep(0.01)  # the next run's writes are strictly later than this run's done markers
        return log.lines, list(submitted)

    return planned, run


def _record(p: dict) -> dict:
    return json.loads((Path(p["run_dir"]) / "run.json").read_text())


def test_a_range_an_identical_run_committed_is_skipped_and_said(backfill):
    planned, run = backfill
    _, jobs = run(planned("run-a"), "run-a")
    assert jobs == ["2024-01-01..2024-01-02", "2024-01-03..2024-01-03"]
    b = planned("run-b")
    log, jobs = run(b, "run-b")
    assert jobs == []
    assert "2024-01-01..2024-01-03 (3 partitions) already committed by run run-a (same config, same input)" in log
    assert log[-1].startswith("nothing replayed: all 3 partitions are already committed")  # the soak counts it
    assert _record(b)["skipped"] == {"committed_by": {"run-a": DAYS}}
    assert _record(b)["config"]["fingerprint"] == _record(planned("run-a"))["config"]["fingerprint"] \
        == config_fingerprint(b["config_raw"])
    # force replays anyway (and the run after it finds the forced run's commits).
    log, jobs = run(planned("run-c"), "run-c", force=True)
    assert len(jobs) == 2 and "force: replaying them again" in log
    log, jobs = run(planned("run-d"), "run-d")
    assert jobs == [] and any("already committed by run run-c" in line for line in log)


def test_other_input_another_config_or_a_later_commit_replay(backfill, tmp_path):
    planned, run = backfill
    run(planned("run-a"), "run-a")
    # Another config (one key changed): replayed.
    other = json.loads(json.dumps(planned("x")["config_raw"]))
    other["watermark"]["max_out_of_orderness"] = "17s"
    _, jobs = run(planned("run-b", config_raw=other), "run-b")
    assert len(jobs) == 2
    # run-b's commits are now the outputs: run-a's twin is not skipped, run-b's is.
    _, jobs = run(planned("run-c"), "run-c")
    assert len(jobs) == 2
    _, jobs = run(planned("run-d"), "run-d")
    assert jobs == []
    # A source file changed since: replayed, the chunk after it too (it continues the changed day's state).
    source_file = next((tmp_path / "log" / "dt=2024-01-02").iterdir())
    os.utime(source_file, ns=(time.time_ns(), time.time_ns()))
    _, jobs = run(planned("run-e"), "run-e")
    assert len(jobs) == 2
    # A commit of one partition by something without a run folder (a `replay run` from the CLI) after the run's:
    # its chunk is replayed, the chunk before it (run-e's commits) is not.
    (tmp_path / "out" / "counts" / "dt=2024-01-03" / "part-0.parquet").write_bytes(b"y")
    _, jobs = run(planned("run-f"), "run-f")
    assert jobs == ["2024-01-03..2024-01-03"]
    # The last two days continuing the first: the same replay of them as run-e's and run-f's, skipped; the same days
    # starting a new history: another place in it, replayed.
    have = list(DAYS)
    continuing = plan_range(have, have[1], have[2], end_of_input="flush", continue_from=DAYS[0]).to_dict()
    log, jobs = run(planned("run-g", plan=continuing, start=DAYS[1]), "run-g")
    assert jobs == [] and "2024-01-02..2024-01-02 (1 partition) already committed by run run-e (same config, " \
                          "same input)" in log and "2024-01-03..2024-01-03 (1 partition) already committed by run " \
                          "run-f (same config, same input)" in log
    new_history = plan_range(have, have[1], have[2], end_of_input="flush").to_dict()
    _, jobs = run(planned("run-h", plan=new_history, start=DAYS[1]), "run-h")
    assert jobs == ["2024-01-02..2024-01-03"]


def test_the_chunks_an_identical_run_committed_before_it_was_killed_are_skipped(backfill, monkeypatch):
    """run-a is killed in its second chunk (its first committed); run-b, which takes the output's turn next, skips
    the first chunk (said: which run committed it), replays the second continuing run-a's carried state; run-c then
    finds everything committed, by the two runs; force replays every chunk."""
    from event_replay.orchestration.submit_hook import JobFailed, ReplaySubmitHook

    planned, run = backfill
    commit = ReplaySubmitHook.submit
    runs: list[str] = []  # the run ids, in order of their tries

    def killed_in_the_second_chunk(self, application="", **kwargs):
        if runs[-1] == "run-a" and json.loads(self.replay_args[-1])["partitions"] == "2024-01-03..2024-01-03":
            raise JobFailed("spark-submit killed")  # what the hook raises for a job that ended badly
        commit(self, application, **kwargs)

    monkeypatch.setattr(ReplaySubmitHook, "submit", killed_in_the_second_chunk)
    inner = run

    def run(planned_run, run_id, **params):  # noqa: F811 - the fixture's run, noting whose try it is
        runs.append(run_id)
        return inner(planned_run, run_id, **params)
    with pytest.raises(SystemExit) as killed:  # the task fails (failures.Failed)
        run(planned("run-a"), "run-a")
    assert "spark-submit killed" in str(killed.value.reason)
    b = planned("run-b")
    log, jobs = run(b, "run-b")
    assert jobs == ["2024-01-03..2024-01-03"]
    assert "job 1 of 2: 2024-01-01..2024-01-02 (2 partitions) already committed by run run-a (same config, same " \
           "input): skipped" in log
    assert _record(b)["skipped"] == {"committed_by": {"run-a": DAYS[:2]}}
    log, jobs = run(planned("run-c"), "run-c")
    assert jobs == [] and log[-1].startswith("nothing replayed: all 3 partitions are already committed")
    assert "2024-01-01..2024-01-02 (2 partitions) already committed by run run-a (same config, same input)" in log
    assert "2024-01-03..2024-01-03 (1 partition) already committed by run run-b (same config, same input)" in log
    _, jobs = run(planned("run-d"), "run-d", force=True)
    assert jobs == ["2024-01-01..2024-01-02", "2024-01-03..2024-01-03"]


def test_the_dry_run_lists_the_partitions_already_committed(backfill):
    from airflow.sdk.exceptions import AirflowSkipException

    planned, run = backfill
    run(planned("run-a"), "run-a")
    with pytest.raises(AirflowSkipException, match="already committed by run run-a") as skipped:
        run(planned("dry", dry_run=True), "dry")
    assert "2024-01-01..2024-01-03 (3 partitions)" in str(skipped.value)
    assert not Path(planned("dry")["run_dir"]).exists()  # the dry run writes nothing


@pytest.mark.integration
@pytest.mark.spark
@pytest.mark.timeout(1500)
def test_a_second_identical_backfill_under_airflow_replays_nothing(tmp_path):
    """`airflow dags test` twice with the same request: the first replays (one spark-submit), the second finds every
    partition committed by the first, replays nothing and succeeds; its report is complete all the same."""
    from airflow_env import airflow, airflow_env, prepare, write_config

    write_days(tmp_path / "data", generate_days(DAYS[0], days=2, rows_per_day=100, splits=3, seed=3, rate=20.0))
    config = write_config(tmp_path / "job.yaml", tmp_path / "data", tmp_path / "out")
    env = airflow_env(tmp_path / "airflow")
    prepare(env)
    conf = json.dumps({"config": str(config), "start_date": DAYS[0], "end_date": DAYS[1], "run_data_quality": False})
    airflow(env, "dags", "test", "event_time_backfill", "2024-02-01", "-c", conf, timeout=1200)
    again = airflow(env, "dags", "test", "event_time_backfill", "2024-02-02", "-c", conf, timeout=600)
    records = sorted((_record({"run_dir": str(f.parent)}) for f in (tmp_path / "out" / "_airflow").glob("*/run.json")),
                     key=lambda r: r["written"])
    first, second = records
    assert len(first["jobs"]) == 1 and "skipped" not in first
    assert second["jobs"] == [] and second["skipped"] == {"committed_by": {first["run_id"]: DAYS[:2]}}
    report = json.loads((tmp_path / "out" / "_airflow" / Path(second["config"]["effective"]).parent.name
                         / "report.json").read_text())
    assert report["complete"], report
    assert f"already committed by run {first['run_id']} (same config, same input)" in again.stdout + again.stderr
