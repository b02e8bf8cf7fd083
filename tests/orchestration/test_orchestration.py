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
    with pytest.raises(pl.PlanError, match="2024-01-01"):
        plan_partitions(v2)


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


def test_partition_progress_line_and_table(tmp_path):
    """The replay task's log: one line per partition, a table at the end, numbers from what it wrote."""
    import pyarrow as pa

    from event_replay.orchestration.report import partition_figures, progress_line, progress_table

    for ds, table in {"counts": pa.table({"rows_read": [120], "quarantined_rows": [2]}),
                      "windows": pa.table({"key": ["a"] * 7}), "late_events": pa.table({"key": ["a"] * 3}),
                      "quarantine": pa.table({"reason": ["bad", "bad"]})}.items():
        (tmp_path / ds / "dt=2024-03-01").mkdir(parents=True)
        pq.write_table(table, tmp_path / ds / "dt=2024-03-01" / "part-0.parquet")
    f = partition_figures(tmp_path, "2024-03-01", 12.345)
    assert progress_line(f) == "2024-03-01: rows 120, firings 7, late rows 3, quarantined 2, seconds 12.3"
    assert progress_table([f, {**f, "partition": "2024-03-02", "rows_read": 1500}]).splitlines() == [
        "partition   rows  firings  late rows  quarantined  seconds",
        "2024-03-01   120        7          3            2     12.3",
        "2024-03-02  1500        7          3            2     12.3"]


def test_refusals_name_the_form_field(project, tmp_path):
    """What the validate task says: the form's title for the field, in one line, and no retry."""
    from airflow.sdk.exceptions import AirflowFailException

    root = project[0]
    for request, said in [(params(start_date="2024-01-03", end_date="2024-01-01"),
                           "Last day: 2024-01-01 is before the first day 2024-01-03 (the range is inclusive)"),
                          (params(idle_timeout="5 sec"), "Override watermark.idle_timeout: "),
                          (params(end_date="tomorrow"), "Last day: not a date: 'tomorrow' (use YYYY-MM-DD)")]:
        with pytest.raises(AirflowFailException) as e:
            validate_backfill(request, str(root), "r")
        assert str(e.value).startswith(said), str(e.value)


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
