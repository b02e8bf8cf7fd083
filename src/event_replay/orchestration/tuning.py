"""The `watermark_tuning` DAG's logic: the typed form (a config and the three grids), validation before anything
runs, the Spark job (one spark-submit of `python -m event_replay.tune_job` through the `replay_spark` connection and
pool) and the report (the table the job wrote, logged and returned).

Every rejection is a `ConfigError`: a grid value is named by its form field (`params.idle_timeout`), a config key
by its dotted path.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping

from airflow.sdk import Param

from ..layout import TUNING_FOLDER
from ..semantics.config_keys import ConfigError
from ..tuning.grid import GridError, parse_grid
from ..tuning.results import read_results
from .form import GRID_PATTERN, IDLE_GRID_PATTERN
from .operators import ReplaySparkSubmitOperator
from .params import (CONFIGS_DIR, load_with_overrides, resolve_config_file, run_dir, shipped_configs,
                     write_effective_config)

log = logging.getLogger(__name__)

GRID_FIELDS = ("max_out_of_orderness", "idle_timeout", "allowed_lateness")
DEFAULTS = {"max_out_of_orderness": "200ms,500ms,2s,5s", "idle_timeout": "none,5s,30s", "allowed_lateness": None}
TUNE_MODULE = Path(__file__).resolve().parents[1] / "tune_job.py"


def airflow_params(project_dir: str | Path) -> dict[str, Any]:
    """The trigger form: which config, and the three grids (comma-separated durations; `none` = no idleness)."""
    configs = shipped_configs(project_dir)
    default = f"{CONFIGS_DIR}/demo_partitioned.yaml"
    return {
        "config": Param(default if default in configs else (configs[0] if configs else default), type="string",
                        minLength=1, title="Job config", examples=configs,
                        description="A config shipped in jobs/configs/, or the path of any job config YAML: its "
                                    "source is replayed under every variant."),
        "max_out_of_orderness": Param(DEFAULTS["max_out_of_orderness"], type="string", pattern=GRID_PATTERN,
                                      title="Grid: watermark.max_out_of_orderness",
                                      description="Comma-separated delays, e.g. 1s,5s,30s."),
        "idle_timeout": Param(DEFAULTS["idle_timeout"], type="string", pattern=IDLE_GRID_PATTERN,
                              title="Grid: watermark.idle_timeout",
                              description="Comma-separated idle timeouts; none = no idleness. E.g. none,30s,2m."),
        "allowed_lateness": Param(DEFAULTS["allowed_lateness"], type=["null", "string"], pattern=GRID_PATTERN,
                                  title="Grid: window.allowed_lateness",
                                  description="Empty: the config's value. Comma-separated durations, e.g. 0,2s."),
    }


def validate_tuning(params: Mapping[str, Any], project_dir: str | Path, run_id: str) -> dict[str, Any]:
    """The config (paths made absolute) and the grid, every variant's config validated; the effective config is
    written for the Spark job. Returns the job's arguments (XCom)."""
    config_file = resolve_config_file(params.get("config"), project_dir)
    cfg = load_with_overrides(str(config_file), {}, project_dir)
    grids = {f: params.get(f) for f in GRID_FIELDS}
    for f, v in grids.items():
        if v is not None and not isinstance(v, str):
            raise ConfigError(f"params.{f}", f"must be a comma-separated list of durations, got {v!r}")
    try:
        grid, variants = parse_grid(cfg, grids["max_out_of_orderness"], grids["idle_timeout"],
                                    grids["allowed_lateness"], options={f: f"params.{f}" for f in GRID_FIELDS})
    except GridError as exc:
        raise ConfigError(exc.option, exc.why) from None
    folder = run_dir(cfg, run_id, project_dir)
    config_path = write_effective_config(cfg, folder / "tuning.yaml")
    args = ["--config", config_path]
    for f in GRID_FIELDS:
        if grids[f] is not None and grids[f].strip():
            args += [f"--{f.replace('_', '-')}", grids[f].strip()]
    log.info("tuning request valid: %s, %d variants (%s)", config_file, len(variants), grid.name)
    return {"config_file": str(config_file), "config_path": config_path, "output_path": cfg.output.path,
            "grid": grid.name, "variants": [v.name for v, _ in variants], "job_args": args}


def tuning_report(validated: Mapping[str, Any]) -> dict[str, Any]:
    """The table the job wrote (fails if it is missing), logged as Markdown."""
    folder = Path(validated["output_path"], TUNING_FOLDER, validated["grid"])
    results = {r["folder"]: r for r in read_results(validated["output_path"])}
    if validated["grid"] not in results:
        raise RuntimeError(f"the tuning job left no result in {folder}")
    md = (folder / "tuning.md").read_text()
    log.info("tuning result %s:\n%s", folder, md)
    return {"folder": str(folder), "table_md": str(folder / "tuning.md"), "plot": str(folder / "late_share_vs_lag.png"),
            "variants": len(results[validated["grid"]]["rows"])}


class TuningSubmitOperator(ReplaySparkSubmitOperator):
    """One spark-submit of event_replay/tune_job.py (connection and pool `replay_spark`) with the arguments
    the validate task produced: every variant runs in this one Spark application."""

    def __init__(self, *, validate_task_id: str, **kwargs: Any):
        kwargs.setdefault("name", "event-replay-tune")
        super().__init__(application=str(TUNE_MODULE), **kwargs)
        self.validate_task_id = validate_task_id

    def execute(self, context: Any) -> None:
        v = context["ti"].xcom_pull(task_ids=self.validate_task_id)
        self.log.info("tuning %d variants: %s", len(v["variants"]), "; ".join(v["variants"]))
        self.submit(context, v["job_args"])
