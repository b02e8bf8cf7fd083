"""The backfill DAGs' outputs as Airflow Assets (orchestration/assets.py): the replay task's outlets, the extra of the
events it emits (output path and partition range), and the example downstream DAG of docs/examples scheduled on
them (loaded by DagBag, its task run on such an event)."""
from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from event_replay.orchestration.chunks import job_plans
from event_replay.orchestration.plan import plan_range

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
DATASETS = ("windows", "late_events", "watermarks", "quarantine", "counts")
D = dt.date.fromisoformat


def _dagbag(folder: Path):
    home = tempfile.mkdtemp(prefix="airflow-dagbag-")
    os.environ.setdefault("AIRFLOW_HOME", home)
    os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(folder))


@pytest.fixture(scope="module")
def dagbag():
    return _dagbag(ROOT / "dags")


@pytest.fixture(scope="module")
def examples():
    return _dagbag(EXAMPLES)


def test_assets_are_one_per_output_dataset():
    from event_replay.layout import DATASETS as WRITTEN
    from event_replay.orchestration.assets import OUTPUT_ASSETS, output_asset

    assert WRITTEN == DATASETS
    assert [(a.name, a.uri, a.group) for a in OUTPUT_ASSETS] == [
        (f"event_replay.{d}", f"x-event-replay://outputs/{d}", "event_replay") for d in DATASETS]
    with pytest.raises(ValueError, match="not an output dataset"):
        output_asset("_state")


@pytest.mark.parametrize("dag_id,task_id", [("event_time_backfill", "replay_partitions"),
                                            ("nightly_event_time_backfill", "replay_partition")])
def test_backfill_dags_declare_the_output_assets_as_outlets(dagbag, dag_id, task_id):
    from event_replay.orchestration.assets import OUTPUT_ASSETS

    dag = dagbag.dags[dag_id]
    assert list(dag.get_task(task_id).outlets) == list(OUTPUT_ASSETS)
    # only the task that commits the partitions updates them
    assert [t.task_id for t in dag.tasks if t.outlets] == [task_id]


def _planned(tmp_path, days=5, missing=()):
    have = [(D("2024-01-01") + dt.timedelta(days=i)).isoformat() for i in range(days)]  # partition ids
    plan = plan_range([d for d in have if d not in missing], have[0], have[-1], end_of_input="flush",
                      allow_missing=bool(missing))
    return {"plan": plan.to_dict(), "run_dir": str(tmp_path / "run"), "output_path": str(tmp_path / "out") + "/",
            "config_path": "/c.yaml", "config_file": "jobs/configs/demo_partitioned.yaml", "partitions_per_job": 2,
            "jobs": job_plans(plan.runs, 2)}


def test_the_replay_task_emits_the_range_and_output_path_on_every_asset(monkeypatch, tmp_path):
    """The events carry where the run wrote each dataset and the partitions it replayed (all of them, also those
    a retry skipped); a run that fails emits nothing (Airflow emits outlet events on success only)."""
    from airflow.sdk.execution_time.context import OutletEventAccessors

    from event_replay.orchestration.assets import OUTPUT_ASSETS
    from event_replay.orchestration.operators import ReplayPartitionsOperator
    from event_replay.orchestration.submit_hook import ReplaySubmitHook

    def fake_submit(self, application="", **kwargs):  # each job "commits" its partitions' states
        args = list(self.replay_args)
        lo, hi = (D(x) for x in json.loads(args[args.index("--plan") + 1])["partitions"].split(".."))
        for i in range((hi - lo).days + 1):
            state = tmp_path / "out" / "_state" / (lo + dt.timedelta(days=i)).isoformat()
            state.mkdir(parents=True)
            (state / "manifest.json").touch()

    monkeypatch.setattr(ReplaySubmitHook, "submit", fake_submit)
    planned = _planned(tmp_path, days=5, missing=("2024-01-03",))
    events = OutletEventAccessors()
    op = ReplayPartitionsOperator(task_id="replay_partitions", plan_task_id="plan", project_dir=str(ROOT))
    op.execute({"ti": SimpleNamespace(xcom_pull=lambda task_ids: planned), "outlet_events": events})
    out = str(tmp_path / "out")
    for dataset, asset in zip(DATASETS, OUTPUT_ASSETS):
        assert events[asset].extra == {
            "output_path": out, "path": f"{out}/{dataset}", "dataset": dataset,
            "partitions": {"first": "2024-01-01", "last": "2024-01-05", "count": 5}, "missing_days": ["2024-01-03"],
            "config_file": "jobs/configs/demo_partitioned.yaml"}
    assert sorted(a.name for a in events) == sorted(f"event_replay.{d}" for d in DATASETS)


def test_example_downstream_dag_is_scheduled_on_the_backfill_windows(examples):
    from event_replay.orchestration.assets import output_asset

    assert examples.import_errors == {}
    assert set(examples.dag_ids) == {"after_event_replay_backfill"}
    dag = examples.dags["after_event_replay_backfill"]
    assert type(dag.timetable).__name__ == "AssetTriggeredTimetable"
    assert list(dag.timetable.asset_condition.objects) == [output_asset("windows")]


def test_example_downstream_task_reads_the_event_the_backfill_emits(examples, tmp_path):
    from event_replay.orchestration.assets import event_extra, output_asset

    dag = examples.dags["after_event_replay_backfill"]
    extra = event_extra(_planned(tmp_path, days=3), "windows")
    events = {output_asset("windows"): [SimpleNamespace(extra=extra)]}
    folders = dag.get_task("use_replayed_windows").python_callable(triggering_asset_events=events)
    assert folders == [f"{tmp_path}/out/windows/dt=2024-01-0{i}" for i in (1, 2, 3)]
