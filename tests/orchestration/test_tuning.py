"""The watermark_tuning DAG's logic (orchestration/tuning.py), through the parsed DAG: a thin manual DAG with a
typed form, the form refusing a bad grid, and the validate task naming the param and writing the job's arguments."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

@pytest.fixture(scope="module")
def tuning_dag():
    import os
    import tempfile

    os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="airflow-dagbag-"))  # no DB needed to parse
    os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(ROOT / "dags" / "watermark_tuning.py"))
    assert bag.import_errors == {}
    return bag.dags["watermark_tuning"]


def test_dag_parses_thin_manual_with_typed_grid_params(tuning_dag):
    dag = tuning_dag
    assert type(dag.timetable).__name__ == "NullTimetable"
    assert len((ROOT / "dags" / "watermark_tuning.py").read_text().splitlines()) < 100
    assert set(dag.params) == {"config", "max_out_of_orderness", "idle_timeout", "allowed_lateness"}
    tune = dag.get_task("tune")
    assert tune.pool == "replay_spark" and tune.conn_id == "replay_spark"
    assert tune.application == str(ROOT / "src" / "event_replay" / "tune_job.py")
    assert dag.get_task("validate").downstream_task_ids == {"tune", "report"}
    assert tune.downstream_task_ids == {"report"}
    assert "jobs/configs/demo_partitioned.yaml" in dag.params.get_param("config").schema["examples"]


def test_dag_form_rejects_a_bad_grid(tuning_dag):
    import copy

    from airflow.sdk.exceptions import ParamValidationError

    def form(values):
        params = copy.deepcopy(tuning_dag.params)
        params.update(values)
        return params.validate()

    ok = form({"max_out_of_orderness": "1s, 5s,30s", "idle_timeout": "none,30s,2m", "allowed_lateness": "0,2s"})
    assert ok["idle_timeout"] == "none,30s,2m"
    for bad in ({"max_out_of_orderness": "1s,5 parsecs"}, {"max_out_of_orderness": "none,1s"},
                {"idle_timeout": "none,,30s"}, {"idle_timeout": "never"}, {"allowed_lateness": "2s;5s"},
                {"max_out_of_orderness": ""}):
        with pytest.raises(ParamValidationError):
            form(bad)


def test_dag_validate_task_names_the_param_and_writes_the_job_args(tuning_dag, tmp_path):
    from event_replay.semantics.config_keys import ConfigError

    fn = tuning_dag.get_task("validate").python_callable
    base = {k: tuning_dag.params[k] for k in tuning_dag.params}
    for field, value in (("idle_timeout", "none,0s"), ("max_out_of_orderness", "1s,P1Y"),
                         ("allowed_lateness", "soon")):
        with pytest.raises(ConfigError) as e:
            fn(params={**base, field: value}, run_id="test")
        assert e.value.key == f"params.{field}", e.value
    with pytest.raises(ConfigError) as e:
        fn(params={**base, "config": "no_such_job"}, run_id="test")
    assert e.value.key == "params.config"
    job = tmp_path / "job.yaml"
    job.write_text(f"source: {{path: {tmp_path / 'log'}}}\nwindow: {{type: tumbling, size: 2s}}\n"
                   f"watermark: {{max_out_of_orderness: 1s}}\naggregations: {{cnt: count(*)}}\n"
                   f"output: {{path: {tmp_path / 'out'}}}\n")
    v = fn(params={**base, "config": str(job), "idle_timeout": "30s, none", "allowed_lateness": None},
           run_id="manual__x")
    assert v["grid"] == "delay_200ms-500ms-2s-5s__idle_none-30s__lateness_0ms" and len(v["variants"]) == 8
    assert v["job_args"][:2] == ["--config", v["config_path"]] and Path(v["config_path"]).is_file()
    assert v["job_args"][2:] == ["--max-out-of-orderness", "200ms,500ms,2s,5s", "--idle-timeout", "30s, none"]
    assert v["config_path"].startswith(str(tmp_path / "out" / "_airflow" / "manual__x"))
