"""The DAGs as Airflow sees them: DagBag import, structure, thin files, and params rejected before anything runs."""
from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
DAGS = ROOT / "dags"
BACKFILL_DAG_IDS = {"event_time_backfill", "nightly_event_time_backfill"}
DAG_IDS = BACKFILL_DAG_IDS | {"watermark_tuning"}  # watermark_tuning's own checks: tests/orchestration/test_tuning.py


@pytest.fixture(scope="module")
def dagbag():
    # Airflow reads its config when first imported: point it at a throwaway home (no DB is needed to parse).
    home = tempfile.mkdtemp(prefix="airflow-dagbag-")
    os.environ.setdefault("AIRFLOW_HOME", home)
    os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(DAGS))


def test_dagbag_imports_every_dag(dagbag):
    assert dagbag.import_errors == {}
    assert set(dagbag.dag_ids) == DAG_IDS
    py_files = sorted(DAGS.glob("*.py"))
    assert len(py_files) == len(DAG_IDS)
    for f in py_files:
        n = len(f.read_text().splitlines())
        assert n < 100, f"{f.name} has {n} lines: logic belongs in event_replay.orchestration"


def test_backfill_dag_structure(dagbag):
    dag = dagbag.dags["event_time_backfill"]
    assert type(dag.timetable).__name__ == "NullTimetable"  # schedule=None: manual trigger only
    assert set(dag.params) >= {"config", "start_date", "end_date", "max_out_of_orderness", "idle_timeout",
                               "allowed_lateness", "end_of_input", "allow_missing_partitions", "dq_warn_only",
                               "partitions_per_job"}
    assert dag.params["partitions_per_job"] == 31
    replay = dag.get_task("replay_partitions")
    assert replay.pool == "replay_spark" and replay.conn_id == "replay_spark"
    assert replay.application == str(ROOT / "jobs" / "replay_job.py")
    dq = dag.get_task("data_quality")  # a Spark job too (`replay_job.py quality`), through the same connection and pool
    assert dq.pool == "replay_spark" and dq.conn_id == "replay_spark" and dq.application == replay.application
    assert dag.get_task("validate").downstream_task_ids == {"plan"}
    assert dag.get_task("plan").downstream_task_ids == {"replay_partitions"}
    # versus live: calibrate (calibrate_task.py), then compare_live (compare_task.py), no-ops without a live path
    assert replay.downstream_task_ids == {"calibrate", "compare_live", "data_quality"}
    calibrate, compare = dag.get_task("calibrate"), dag.get_task("compare_live")
    assert calibrate.downstream_task_ids == {"compare_live"} and calibrate.application == replay.application
    assert compare.downstream_task_ids == {"data_quality"} and compare.pool == calibrate.pool == "replay_spark"
    assert compare.application == replay.application and dag.params["live_path"] is None
    assert dag.params["calibrate_idle_timeout"] is None and dag.params["calibrate_max_out_of_orderness"] is None
    assert dag.get_task("data_quality").downstream_task_ids == {"report"}
    for task_id in ("replay_partitions", "data_quality"):  # the way from the task to what its run left
        assert {link.name for link in dag.get_task(task_id).operator_extra_links} == \
            {"Why-report", "Data Docs", "Replay runs"}
    schema = dag.params.get_param("config").schema
    # the form offers the configs a backfill can replay (partitioned by day), the demo's first
    assert dag.params["config"] == "jobs/configs/demo_partitioned.yaml" and "jobs/configs/demo.yaml" not in \
        schema["examples"]
    assert dag.params["dry_run"] is False
    assert not dag.is_paused_upon_creation  # manual only: a triggered run must not stay queued behind a pause


def test_nightly_dag_structure(dagbag):
    dag = dagbag.dags["nightly_event_time_backfill"]
    assert type(dag.timetable).__name__ == "CronDataIntervalTimetable" and dag.timetable.expression == "0 0 * * *"
    assert dag.catchup is False and dag.max_active_runs == 1
    replay = dag.get_task("replay_partition")
    assert replay.depends_on_past and replay.pool == "replay_spark"
    assert all(t.depends_on_past and t.wait_for_downstream for t in dag.tasks)  # days strictly in order
    assert "start_date" not in dag.params and dag.params["end_of_input"] == "hold"
    assert "partitions_per_job" not in dag.params  # one day per run
    assert dag.is_paused_upon_creation in (None, True)  # unpausing starts it: the README says how
    wait = dag.get_task("wait_for_partition")  # the day's folder, before anything is planned
    assert wait.mode == "reschedule" and wait.downstream_task_ids == {"plan"}
    assert dag.get_task("validate").downstream_task_ids == {"wait_for_partition", "plan"}


@pytest.mark.parametrize("dag_id", sorted(BACKFILL_DAG_IDS))
def test_form_refuses_what_a_schema_can_say(dagbag, dag_id):
    """The trigger form refuses a bad duration, date or choice, and a config that is not a partitioned one of the
    list (nor a path to one), before a run exists (the API answers 400); what a schema cannot say is the validate
    task's (test_validate_task_rejects_bad_range_and_bad_duration)."""
    from airflow.sdk.exceptions import ParamValidationError

    dag = dagbag.dags[dag_id]

    def form(values):  # what the trigger form does: the DAG's params with the user's values, validated
        params = copy.deepcopy(dag.params)
        params.update(values)
        return params.validate()

    ok = form({"idle_timeout": "2m", "max_out_of_orderness": "PT1S", "allowed_lateness": None})
    assert ok["idle_timeout"] == "2m" and ok["allowed_lateness"] is None
    assert form({"config": "/srv/jobs/other.yaml"})["config"] == "/srv/jobs/other.yaml"  # any absolute path
    assert form({"config": "jobs/flink/demo.sql"})["config"] == "jobs/flink/demo.sql"
    bad = [{"idle_timeout": "5 parsecs"}, {"max_out_of_orderness": "-1s"}, {"allowed_lateness": "P1M"},
           {"end_of_input": "later"}, {"config": "jobs/configs/demo.yaml"}, {"calibrate_idle_timeout": "5 parsecs"}]
    if dag_id == "event_time_backfill":
        bad.append({"start_date": "2024-13-45"})
    for values in bad:
        with pytest.raises(ParamValidationError):
            form(values)
    # The refusal says what the field expects (what the form shows at its top), not the schema's regex.
    with pytest.raises(ParamValidationError, match="Override watermark.idle_timeout: a duration such as 500ms") as e:
        form({"idle_timeout": "5 parsecs"})
    assert "pattern" not in str(e.value) and "5 parsecs" in str(e.value)
    with pytest.raises(ParamValidationError, match="Job config: one of the listed configs, or an absolute path"):
        form({"config": "jobs/configs/demo.yaml"})


@pytest.mark.parametrize("dag_id", sorted(BACKFILL_DAG_IDS))
def test_validate_task_rejects_bad_range_and_bad_duration(dagbag, dag_id, tmp_path):
    """What the form cannot see (a range going backwards, a zero idle timeout, a bad duration) fails the first task
    at once, in one line naming the form's field (a SystemExit: no traceback in the task log)."""
    from event_replay.orchestration.failures import Failed as AirflowFailException

    dag = dagbag.dags[dag_id]
    fn = dag.get_task("validate").python_callable
    # A day-partitioned source that exists (the demo's own is written by make demo; one that does not exist is
    # refused before anything else: test_params.py, test_a_config_without_dt_folders_is_named_first).
    import yaml

    for day in ("2024-01-01", "2024-01-02", "2024-01-03"):
        (tmp_path / "log" / f"dt={day}").mkdir(parents=True)
    raw = yaml.safe_load((ROOT / "jobs" / "configs" / "demo_partitioned.yaml").read_text())
    raw["source"]["path"], raw["output"]["path"] = str(tmp_path / "log"), str(tmp_path / "out")
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(raw))
    base = {**{k: dag.params[k] for k in dag.params}, "config": str(tmp_path / "job.yaml")}
    kwargs = {"run_id": "test"}
    if dag_id == "nightly_event_time_backfill":
        import pendulum

        kwargs["logical_date"] = pendulum.datetime(2024, 1, 2, tz="UTC")
    else:
        with pytest.raises(AirflowFailException) as e:
            fn(params={**base, "start_date": "2024-01-03", "end_date": "2024-01-01"}, **kwargs)
        assert str(e.value) == ("Refused: Last day: 2024-01-01 is before the first day 2024-01-03 (the range is "
                                "inclusive)")
    with pytest.raises(AirflowFailException) as e:
        fn(params={**base, "idle_timeout": "0s"}, **kwargs)
    assert str(e.value).startswith("Refused: Job config, key watermark.idle_timeout: ")
    with pytest.raises(AirflowFailException) as e:
        fn(params={**base, "allowed_lateness": "soon"}, **kwargs)
    assert str(e.value).startswith("Refused: Override window.allowed_lateness: "), str(e.value)


def test_extra_links_point_at_the_runs_plugin_routes():
    from types import SimpleNamespace

    from event_replay.orchestration.links import RUN_LINKS

    key = SimpleNamespace(dag_id="event_time_backfill", run_id="manual__2026-01-01T00:00:00+00:00")
    urls = {link.name: link.get_link(None, ti_key=key) for link in RUN_LINKS}
    run = "/replay-runs/run/event_time_backfill/manual__2026-01-01T00%3A00%3A00%2B00%3A00"
    assert {name: url[url.index("/replay-runs"):] for name, url in urls.items()} == {
        "Why-report": f"{run}/why", "Data Docs": f"{run}/docs", "Replay runs": f"{run}/row"}


PROBE_DAG = '''
import logging

import pendulum
from airflow.sdk import DAG, task

with DAG("log_probe", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
    @task
    def speak():
        logging.getLogger("event_replay.probe").warning("probe line from the task")
        print("probe print from the task", flush=True)
        print("2024-01-01  5000  81", flush=True)  # a line a plain-text log reader takes for a timestamp

    speak()
'''


@pytest.mark.integration
def test_dag_test_writes_task_logs_where_the_ui_reads_them(tmp_path):
    """make demo's `dags test` (scripts/dag_test.py): each task's log lands in the file the UI reads."""
    import subprocess
    import sys

    from airflow_env import airflow, airflow_env

    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "log_probe.py").write_text(PROBE_DAG)
    env = airflow_env(tmp_path / "home", AIRFLOW__CORE__DAGS_FOLDER=str(tmp_path / "dags"))
    airflow(env, "db", "migrate", timeout=600)
    script = Path(__file__).resolve().parents[2] / "scripts" / "dag_test.py"
    proc = subprocess.run([sys.executable, str(script), "log_probe"], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    logs = list((tmp_path / "home" / "logs").glob("dag_id=log_probe/run_id=*/task_id=speak/attempt=1.log"))
    assert len(logs) == 1, list((tmp_path / "home").rglob("*.log"))
    text = logs[0].read_text()
    records = [json.loads(line) for line in text.splitlines()]  # every line a JSON record, as a UI run's log
    events = [r["event"] for r in records]
    assert "probe line from the task" in events and "probe print from the task" in events, text
    assert "2024-01-01  5000  81" in events, text  # kept as it was printed, not read as a timestamp
    assert any(e.startswith("[DAG TEST] end task task_id=speak") for e in events), text  # Airflow's lines too
    assert all(r["timestamp"] for r in records), "every record has its own time"
    mine = next(r for r in records if r["event"] == "probe line from the task")
    assert mine["level"] == "warning" and mine["logger"] == "event_replay.probe", mine
    assert "run_id=manual__2024" not in str(logs[0])  # no logical date given: the run is recorded now
