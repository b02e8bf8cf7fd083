"""The backfill DAGs' task callables (orchestration/tasks.py): validate writes the run folder and the effective
config, plan lists the runs, refusals are one line in the form's words, a dry run writes nothing, the nightly sensor
waits for its day then skips. No Spark."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from backfill_cases import params
from event_replay.orchestration.failures import Failed
from event_replay.orchestration.params import run_dir
from event_replay.orchestration.tasks import plan_partitions, validate_backfill
from event_replay.semantics.config import load_config


def test_validate_and_plan_tasks(project):
    root, _, _, out = project
    v = validate_backfill(params(end_date="2024-01-04", allow_missing_partitions=True), str(root),
                          "manual__2024-01-01T00:00:00+00:00")
    assert Path(v["config_path"]).parent == run_dir(load_config(v["config_path"]), "manual__2024-01-01T00:00:00+00:00",
                                                    root)
    assert ":" not in Path(v["run_dir"]).name and Path(v["run_dir"]).is_relative_to(out.resolve())
    assert load_config(v["config_path"]).output.path == str(out.resolve())
    p = plan_partitions(v)
    assert [r["partition"] for r in p["plan"]["runs"]] == ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]
    assert p["plan"]["missing"] == ["2024-01-03"]
    # The plan as the Replay runs page counts it (partitions done / planned), in the run's folder.
    record = json.loads((Path(v["run_dir"]) / "plan.json").read_text())
    assert record["partitions"] == ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]
    # Continuing from state: the partition before the range must have left its state.
    v2 = validate_backfill(params(start_date="2024-01-02", continue_from_state=True), str(root), "r2")
    with pytest.raises(Failed, match="^Refused: partition 2024-01-02 continues from 2024-01-01") as e:
        plan_partitions(v2)
    assert e.value.code == 2


def test_refusals_name_the_form_field(project, tmp_path, caplog):
    """What the validate task says: the cause first, in the form's words (the field's title), in one line logged as
    an error; the task ends with a SystemExit, which Airflow logs without a traceback (failures.py)."""
    import logging

    root = project[0]
    for request, said in [(params(start_date="2024-01-03", end_date="2024-01-01"),
                           "Refused: Last day: 2024-01-01 is before the first day 2024-01-03 (the range is inclusive)"),
                          (params(idle_timeout="5 sec"), "Refused: Override watermark.idle_timeout: "),
                          (params(end_date="tomorrow"), "Refused: Last day: not a date: 'tomorrow' (use YYYY-MM-DD)"),
                          # a grid the form's pattern passes and the calibration would refuse: before any replay
                          (params(live_path="jobs/live/demo/firings", calibrate_idle_timeout="0s,5s"),
                           "Refused: Versus live: calibrate idle timeouts: ")]:
        caplog.clear()
        with caplog.at_level(logging.ERROR), pytest.raises(Failed) as e:
            validate_backfill(request, str(root), "r")
        assert isinstance(e.value, SystemExit) and e.value.code == 2
        assert str(e.value).startswith(said) and "\n" not in str(e.value), str(e.value)
        assert [r.getMessage() for r in caplog.records] == [str(e.value)]


def test_dry_run_tasks_write_nothing_and_list_what_the_plan_would_refuse(project):
    root, _, src, out = project
    v = validate_backfill(params(end_date="2024-01-03", dry_run=True), str(root), "dry")
    p = plan_partitions(v)
    assert v["dry_run"] and v["config_path"] is None and not out.exists()  # nothing written, not even the run folder
    assert [r["partition"] for r in p["plan"]["runs"]] == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert "dt=2024-01-03" in p["refusal"]  # the real run would be refused: a missing day
    assert load_config_raw(v["config_raw"]).source.path == str(src.resolve())


def load_config_raw(raw):
    from event_replay.semantics.config import parse_config

    return parse_config(raw)


def test_nightly_waits_for_its_day_then_is_skipped(project):
    """The nightly run's sensor: done once the day's folder is there; while it is not, it waits until `wait_hours`
    after the day ended, then skips the run (a first run after unpausing catches up a day that may never come)."""
    from airflow.sdk.exceptions import AirflowSkipException

    from event_replay.orchestration.tasks import partition_arrived

    src = project[2]
    utc = dt.timezone.utc
    day_end = dt.datetime(2024, 1, 4, tzinfo=utc)
    v = {"source_path": str(src), "start": "2024-01-03", "allow_missing_partitions": False}
    assert partition_arrived(v, 6, day_end, now=day_end + dt.timedelta(hours=1)) is False
    with pytest.raises(AirflowSkipException, match="dt=2024-01-03 is not in .* 6 h after the day ended"):
        partition_arrived(v, 6, day_end, now=day_end + dt.timedelta(hours=7))
    assert partition_arrived({**v, "start": "2024-01-02"}, 6, day_end, now=day_end) is True
    assert partition_arrived({**v, "allow_missing_partitions": True}, 0, day_end, now=day_end) is True


def _committed(out: Path, day: str) -> None:
    """A partition's five outputs as a replay commits them (a row each)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from event_replay.layout import DATASETS

    for ds in DATASETS:
        (out / ds / f"dt={day}").mkdir(parents=True)
        pq.write_table(pa.table({"k": [1]}), out / ds / f"dt={day}" / "part-0.parquet")


def test_the_report_shows_every_step_and_fails_in_one_line_when_the_calibration_failed(tmp_path, caplog):
    """A failed calibration: the comparison and data quality ran (their results are in the report), the report is
    written with every step's outcome and duration, then fails naming the calibration and its cause, without taking
    the runs page's cause from the calibrate task (it keeps no line of its own)."""
    from backfill_cases import RunTI
    from event_replay.orchestration.failures import FAILURE_KEY
    from event_replay.orchestration.tasks import run_report

    out, run = tmp_path / "out", tmp_path / "out" / "_airflow" / "manual__steps"
    _committed(out, "2024-01-01")
    planned = {"plan": {"runs": [{"partition": "2024-01-01", "first": True, "end_of_input": "flush",
                                  "previous": None, "missing": False}], "missing": []},
               "run_dir": str(run), "output_path": str(out), "config_file": "job.yaml", "config_path": "job.yaml"}
    cause = "calibration: the Spark job failed: replay tune: failed: OutOfMemoryError: Java heap space"
    ti = RunTI({"plan": ("success", 0.5), "replay_partitions": ("success", 25.0), "calibrate": ("failed", 9.0),
                "compare_live": ("success", 30.0), "data_quality": ("success", 20.0)},
               {("plan", "return_value"): planned, ("calibrate", FAILURE_KEY): cause,
                ("data_quality", "return_value"): {"status": "passed (40 expectations)",
                                                   "spark_jobs": {"gx_suites": 3}}})
    with pytest.raises(Failed) as e:
        run_report(ti, "plan", "replay_partitions")
    assert str(e.value) == (f"a step after the replay failed: calibrate failed: {cause} "
                            f"(report: {run / 'report.md'})")
    assert ti.pushed == {}  # the calibrate task's own line stays the run's cause
    md = (run / "report.md").read_text()
    assert ("- steps: plan success 0.5 s, replay_partitions success 25.0 s, calibrate failed 9.0 s, "
            "compare_live success 30.0 s, data_quality success 20.0 s") in md, md
    assert "- data quality: passed (40 expectations)" in md and "| 2024-01-01 | 1 | 1 | 1 | 1 | 1 | no |" in md
    report = json.loads((run / "report.json").read_text())
    assert report["steps"][2] == {"task": "calibrate", "state": "failed", "seconds": 9.0, "line": cause}


def test_the_report_after_a_replay_that_did_not_succeed(tmp_path):
    """A skipped replay (a dry run, nothing to replay) skips the report; a failed one fails it in one line, with
    nothing written."""
    from airflow.sdk.exceptions import AirflowSkipException

    from backfill_cases import RunTI
    from event_replay.orchestration.failures import FAILURE_KEY
    from event_replay.orchestration.tasks import run_report

    with pytest.raises(AirflowSkipException, match="replay_partition ended skipped"):
        run_report(RunTI({"replay_partition": ("skipped", 1.0)}), "plan", "replay_partition")
    ti = RunTI({"replay_partitions": ("failed", 5.0), "calibrate": ("upstream_failed", None),
                "compare_live": ("skipped", 0.1), "data_quality": ("skipped", 0.1)},
               {("replay_partitions", FAILURE_KEY): "the Spark job failed: replay: boom"})
    with pytest.raises(Failed) as e:
        run_report(ti, "plan", "replay_partitions")
    assert str(e.value) == ("no report: replay_partitions failed: the Spark job failed: replay: boom; calibrate "
                            "upstream failed")
    assert ti.pushed == {} and not list(tmp_path.iterdir())
