"""Unit tests of event_replay.orchestration: request validation, partition planning, state checks, job arguments,
the partitioned sample and the report. No Airflow, no Spark."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from airflow_env import write_config
from event_replay.orchestration import plan as pl
from event_replay.orchestration.failures import Failed
from event_replay.orchestration.params import (load_with_overrides, resolve_config_file, run_dir, shipped_configs,
                                               validate_request, write_effective_config)
from event_replay.orchestration.report import build_report, render_markdown
from event_replay.orchestration.sample import generate_days, write_days
from event_replay.orchestration.tasks import plan_partitions, validate_backfill
from event_replay.semantics.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]
D = dt.date.fromisoformat


@pytest.fixture
def project(tmp_path):
    src, out = tmp_path / "data", tmp_path / "out"
    for day in ("2024-01-01", "2024-01-02", "2024-01-04"):
        (src / f"dt={day}").mkdir(parents=True)
    (src / "dt=2024-02-30").mkdir()  # not a day: ignored
    (src / "_tmp").mkdir()
    (tmp_path / "jobs" / "configs").mkdir(parents=True)
    cfg = write_config(tmp_path / "jobs" / "configs" / "small.yaml", Path("data"), Path("out"))
    return tmp_path, cfg, src, out


def params(**kw):
    return {"config": "jobs/configs/small.yaml", "start_date": "2024-01-01", "end_date": "2024-01-02", **kw}


def test_shipped_configs_are_valid():
    names = shipped_configs(ROOT)
    assert "jobs/configs/demo.yaml" in names
    for n in names:
        load_config(ROOT / n)


def test_config_by_name_and_relative_paths_resolved_against_project(project):
    root, cfg, src, out = project
    assert resolve_config_file("small", root) == cfg.resolve()
    c = load_with_overrides("jobs/configs/small.yaml", {}, root)
    assert c.source.path == str(src.resolve()) and c.output.path == str(out.resolve())
    with pytest.raises(ConfigError) as e:
        resolve_config_file("nope.yaml", root)
    assert e.value.key == "params.config"


def test_overrides_are_applied_and_validated_with_the_key_named(project):
    root = project[0]
    c = load_with_overrides("small", {"idle_timeout": "2m", "allowed_lateness": "PT1S", "max_out_of_orderness": ""},
                            root)
    assert (c.watermark.idle_timeout_ms, c.window.allowed_lateness_ms, c.watermark.max_out_of_orderness_ms) == \
        (120_000, 1_000, 500)
    for field, value, key in [("idle_timeout", "soon", "watermark.idle_timeout"),
                              ("idle_timeout", "0s", "watermark.idle_timeout"),
                              ("max_out_of_orderness", "5 parsecs", "watermark.max_out_of_orderness"),
                              ("allowed_lateness", "-1s", "window.allowed_lateness")]:
        with pytest.raises(ConfigError) as e:
            validate_request(params(**{field: value}), root)
        assert e.value.key == key, (field, value, e.value)


def test_bad_range_is_rejected_with_the_key_named(project):
    root = project[0]
    for p, key in [(params(start_date="2024-01-03", end_date="2024-01-01"), "params.end_date"),
                   (params(start_date="2024-13-01"), "params.start_date"),
                   (params(end_date="tomorrow"), "params.end_date"),
                   (params(end_of_input="later"), "params.end_of_input")]:
        with pytest.raises(ConfigError) as e:
            validate_request(p, root)
        assert e.value.key == key
    cfg, req = validate_request(params(end_of_input="hold"), root)
    assert (req.start, req.end, req.end_of_input) == (D("2024-01-01"), D("2024-01-02"), "hold")


def test_list_partitions_only_days(project):
    assert pl.list_partitions(project[2]) == [D("2024-01-01"), D("2024-01-02"), D("2024-01-04")]
    with pytest.raises(pl.PlanError):
        pl.list_partitions(project[0] / "absent")


def test_plan_orders_partitions_holds_all_but_the_last():
    avail = [D("2024-01-03"), D("2024-01-01"), D("2024-01-02")]
    p = pl.plan_range(avail, D("2024-01-01"), D("2024-01-03"), end_of_input="flush")
    assert p.partitions == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert [(r.first, r.previous, r.end_of_input) for r in p.runs] == [
        (True, None, "hold"), (False, "2024-01-01", "hold"), (False, "2024-01-02", "flush")]
    assert p.runs[1].job_args("/c.yaml") == ["--config", "/c.yaml", "--partition", "2024-01-02",
                                             "--end-of-input", "hold", "--previous", "2024-01-01"]
    assert p.runs[0].job_args("/c.yaml")[-1] == "--first"
    assert pl.Plan.from_dict(p.to_dict()) == p


def test_plan_missing_partitions_fail_unless_allowed():
    avail = [D("2024-01-01"), D("2024-01-04")]
    with pytest.raises(pl.PlanError, match="dt=2024-01-02, dt=2024-01-03"):
        pl.plan_range(avail, D("2024-01-01"), D("2024-01-04"), end_of_input="flush")
    p = pl.plan_range(avail, D("2024-01-01"), D("2024-01-04"), end_of_input="hold", allow_missing=True)
    assert p.missing == ("2024-01-02", "2024-01-03")
    # Missing days replay as empty partitions: the clock runs through them as in one replay of the range.
    assert [(r.partition, r.previous, r.end_of_input, r.missing) for r in p.runs] == [
        ("2024-01-01", None, "hold", False), ("2024-01-02", "2024-01-01", "hold", True),
        ("2024-01-03", "2024-01-02", "hold", True), ("2024-01-04", "2024-01-03", "hold", False)]
    assert p.runs[1].job_args("c")[-3:] == ["--previous", "2024-01-01", "--allow-missing"]
    assert "--allow-missing" not in p.runs[3].job_args("c")
    only_missing = pl.plan_range(avail, D("2024-01-02"), D("2024-01-03"), end_of_input="flush", allow_missing=True)
    assert [(r.missing, r.end_of_input) for r in only_missing.runs] == [(True, "hold"), (True, "flush")]


def test_continuing_needs_the_predecessors_state(tmp_path):
    avail = [D("2024-01-01"), D("2024-01-02")]
    assert pl.predecessor(avail, D("2024-01-01")) is None
    assert pl.predecessor(avail, D("2024-01-05")) == "2024-01-02"
    run = pl.plan_range(avail, D("2024-01-02"), D("2024-01-02"), end_of_input="hold",
                        continue_from="2024-01-01").runs[0]
    assert not run.first and "--first" not in run.job_args("c")
    with pytest.raises(pl.PlanError, match="no carried state"):
        pl.check_state(tmp_path, run)
    pl.state_path(tmp_path, "2024-01-01").mkdir(parents=True)
    with pytest.raises(pl.PlanError):  # an empty folder is not a state (the job writes it all or nothing)
        pl.check_state(tmp_path, run)
    (pl.state_path(tmp_path, "2024-01-01") / "part-0.parquet").write_bytes(b"x")
    pl.check_state(tmp_path, run)


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


def test_effective_config_round_trips(project, tmp_path):
    c = load_with_overrides("small", {"idle_timeout": "7s"}, project[0])
    path = write_effective_config(c, tmp_path / "run" / "job.yaml")
    assert load_config(path) == c


def test_partitioned_sample(tmp_path):
    t = generate_days("2024-03-01", days=3, rows_per_day=400, splits=3, seed=1)
    assert t.num_rows == 1200
    parts = write_days(tmp_path / "s", t)
    assert parts == ["2024-03-01", "2024-03-02", "2024-03-03"]
    assert pl.list_partitions(tmp_path / "s") == [D(p) for p in parts]
    df = t.to_pandas()
    for _, g in df.groupby("split"):  # offsets 0.. strictly increasing per split in arrival order
        assert list(g.sort_values(["arrival_time", "offset"])["offset"]) == list(range(len(g)))
    last_p2 = df[df.split == "p2"].arrival_time.max()
    assert last_p2 < df.arrival_time.max() - dt.timedelta(days=1)  # the last split falls silent
    late = df[(df.arrival_time - df.event_time) > dt.timedelta(hours=12)]
    assert len(late) == 6  # 3 rows a day, days 2 and 3, an event a day earlier
    assert sum(pq.read_table(tmp_path / "s" / f"dt={p}").num_rows for p in parts) == 1200


def test_report_counts_from_footers(tmp_path):
    t = generate_days("2024-03-01", days=1, rows_per_day=50, splits=2)
    (tmp_path / "windows" / "dt=2024-03-01").mkdir(parents=True)
    pq.write_table(t, tmp_path / "windows" / "dt=2024-03-01" / "part-0.parquet")
    r = build_report(str(tmp_path), ["2024-03-01", "2024-03-02"], run_id="x")
    assert r["partitions"][0]["rows"]["windows"] == 50 and r["totals"]["windows"] == 50
    assert "late_events" in r["partitions"][0]["missing_outputs"] and not r["complete"]
    assert "| 2024-03-02 | missing |" in render_markdown(r)


def test_rows_read_of_a_partition(tmp_path):
    """The replay task's log and run record: the rows a partition read, from its counts/ row."""
    import pyarrow as pa

    from event_replay.orchestration.report import partition_rows_read

    (tmp_path / "counts" / "dt=2024-03-01").mkdir(parents=True)
    pq.write_table(pa.table({"rows_read": [120], "quarantined_rows": [2]}),
                   tmp_path / "counts" / "dt=2024-03-01" / "part-0.parquet")
    assert partition_rows_read(tmp_path, "2024-03-01") == 120
    assert partition_rows_read(tmp_path, "2024-03-02") == 0


def test_refusals_name_the_form_field(project, tmp_path, caplog):
    """What the validate task says: the cause first, in the form's words (the field's title), in one line logged as
    an error; the task ends with a SystemExit, which Airflow logs without a traceback (failures.py)."""
    import logging

    root = project[0]
    for request, said in [(params(start_date="2024-01-03", end_date="2024-01-01"),
                           "Refused: Last day: 2024-01-01 is before the first day 2024-01-03 (the range is inclusive)"),
                          (params(idle_timeout="5 sec"), "Refused: Override watermark.idle_timeout: "),
                          (params(end_date="tomorrow"), "Refused: Last day: not a date: 'tomorrow' (use YYYY-MM-DD)")]:
        caplog.clear()
        with caplog.at_level(logging.ERROR), pytest.raises(Failed) as e:
            validate_backfill(request, str(root), "r")
        assert isinstance(e.value, SystemExit) and e.value.code == 2
        assert str(e.value).startswith(said) and "\n" not in str(e.value), str(e.value)
        assert [r.getMessage() for r in caplog.records] == [str(e.value)]


def test_backfill_form_offers_partitioned_configs_only(project):
    from event_replay.orchestration.params import backfill_configs, is_partitioned

    root, cfg, src, _ = project
    assert is_partitioned(load_with_overrides("small", {}, root)) is True
    flat = root / "jobs" / "configs" / "flat.yaml"
    (root / "flat-log").mkdir()
    (root / "flat-log" / "part-0.parquet").write_bytes(b"")
    flat.write_text(cfg.read_text().replace("path: data\n", "path: flat-log\n"))
    assert "jobs/configs/small.yaml" in backfill_configs(root) and "jobs/configs/flat.yaml" not in backfill_configs(root)
    with pytest.raises(ConfigError) as e:
        validate_request(params(config="flat"), root)
    assert e.value.key == "params.config" and "no dt=YYYY-MM-DD folders" in e.value.why
    assert backfill_configs(ROOT)[0] == "jobs/configs/demo_partitioned.yaml"
    assert "jobs/configs/demo.yaml" not in backfill_configs(ROOT)


def test_a_config_without_dt_folders_is_named_first(project):
    """A flat log, or a source not written yet, is what the refusal says, before its splits or its overrides (the
    form once said `source.splits` first, and the folders only once splits were declared)."""
    import yaml

    root, cfg = project[0], project[1]
    raw = yaml.safe_load(cfg.read_text())
    del raw["source"]["splits"]
    (root / "flat-log").mkdir()
    (root / "flat-log" / "part-0.parquet").write_bytes(b"")
    for source, said in (("flat-log", "which has no dt=YYYY-MM-DD folders"), ("not-yet", "which does not exist")):
        raw["source"]["path"] = source
        (root / "jobs" / "configs" / "bad.yaml").write_text(yaml.safe_dump(raw))
        with pytest.raises(ConfigError) as e:
            validate_request(params(config="bad", idle_timeout="soon", end_date="2023-01-01"), root)
        assert e.value.key == "params.config" and said in e.value.why, e.value
    assert "does not exist" in str(_refusal(root, params(config="bad")))


def _refusal(root, request) -> Failed:
    with pytest.raises(Failed) as e:
        validate_backfill(request, str(root), "r")
    return e.value


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


def test_undeclared_splits_are_refused_before_the_dag_plans(project, tmp_path):
    """A partitioned history needs source.splits (docs/semantics.md, "Partitions"): the validate task refuses it,
    naming the key, instead of the first partition's Spark job."""
    import yaml

    root, cfg_path = project[0], project[1]
    raw = yaml.safe_load(cfg_path.read_text())
    del raw["source"]["splits"]
    cfg_path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError) as e:
        validate_request(params(), root)
    assert e.value.key == "source.splits"
