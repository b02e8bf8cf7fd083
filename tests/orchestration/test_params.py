"""The backfill request (orchestration/params.py): configs by name with paths resolved against the project, the
form's overrides and range validated naming the key, the effective config written and read back, the form offering
partitioned configs only. No Airflow, no Spark."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from backfill_cases import params
from event_replay.orchestration.failures import Failed
from event_replay.orchestration.params import (load_with_overrides, resolve_config_file, shipped_configs,
                                               validate_request, write_effective_config)
from event_replay.orchestration.tasks import validate_backfill
from event_replay.semantics.config import load_config
from event_replay.semantics.config_keys import ConfigError

ROOT = Path(__file__).resolve().parents[2]
D = dt.date.fromisoformat


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


def test_effective_config_round_trips(project, tmp_path):
    c = load_with_overrides("small", {"idle_timeout": "7s"}, project[0])
    path = write_effective_config(c, tmp_path / "run" / "job.yaml")
    assert load_config(path) == c


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
