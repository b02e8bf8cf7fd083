"""The backfill request: a job config, optional overrides and a day range, validated before anything runs.

Every rejection is a `ConfigError(key, why)`: config keys keep their dotted path (`watermark.idle_timeout`),
request fields are named `params.<field>` so the Airflow task log names what to fix. The form those fields come
from, and a refusal in its words: form.py.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..from_flink.settings import FlinkSettingsError, split_list
from ..from_flink.sql import config_from_flink_sql
from ..history.state import require_declared_splits
from ..io.fs import LocalFs
from ..io.partition_folders import partitions_present
from ..layout import AIRFLOW_FOLDER, run_folder_name
from ..semantics.config import JobConfig, load_config, to_raw
from ..semantics.config_keys import ConfigError
from ..semantics.replay_range_config import END_OF_INPUT
from ..semantics.durations import parse_duration_ms

CONFIGS_DIR = "jobs/configs"
FLINK_DIR = "jobs/flink"  # Flink SQL jobs, converted by validate (from_flink.sql) in place of a job config
# Request field -> (config section, key): the overrides the DAG form offers.
DURATION_OVERRIDES = {
    "max_out_of_orderness": ("watermark", "max_out_of_orderness"),
    "idle_timeout": ("watermark", "idle_timeout"),
    "allowed_lateness": ("window", "allowed_lateness"),
}
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
# What parse_duration_ms reads from a form field: 500ms, 5s, 1m, 1min, 2h, 1d, or ISO-8601 days/weeks and a time part
# (PT5S, P1DT2H; no months or years, which have no fixed length). The form refuses anything else before a run exists.
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def shipped_configs(project_dir: str | Path) -> list[str]:
    """The job configs shipped with the project, as paths relative to it (the form's choices)."""
    root = Path(project_dir)
    return sorted(str(p.relative_to(root)) for p in (root / CONFIGS_DIR).glob("*.yaml"))


def shipped_flink_jobs(project_dir: str | Path) -> list[str]:
    """The Flink SQL jobs shipped with the project (the form offers them next to the configs)."""
    root = Path(project_dir)
    return sorted(str(p.relative_to(root)) for p in (root / FLINK_DIR).glob("*.sql"))


DEMO_CONFIG = f"{CONFIGS_DIR}/demo_partitioned.yaml"  # what `make demo` replays: the form's default


def is_partitioned(cfg: JobConfig) -> bool | None:
    """Whether the config's source is laid out in `dt=YYYY-MM-DD` folders, as the backfill DAGs replay it;
    None when that cannot be seen (a remote source, or one not written yet)."""
    if _URI.match(cfg.source.path) or not Path(cfg.source.path).is_dir():
        return None
    return bool(partitions_present(LocalFs(), cfg.source.path, hourly=False))


def backfill_configs(project_dir: str | Path) -> list[str]:
    """The shipped configs the backfill form offers: those that declare their splits (a partitioned replay needs
    them) and whose source is partitioned by day, or not written yet (the demo's: `make demo` writes its log).
    A config over one flat log (demo.yaml) would be refused."""
    offered = []
    for name in shipped_configs(project_dir):
        try:
            cfg = load_with_overrides(name, {}, project_dir)
            require_declared_splits(cfg)
        except ConfigError:
            continue
        if name == DEMO_CONFIG or is_partitioned(cfg) is not False:
            offered.append(name)
    return offered


def resolve_path(path: str, project_dir: str | Path) -> str:
    """Relative paths in configs are relative to the project directory, not to whatever cwd a worker has."""
    if _URI.match(path) or Path(path).is_absolute():
        return path
    return str((Path(project_dir) / path).resolve())


def resolve_config_file(name: str, project_dir: str | Path) -> Path:
    """`jobs/configs/demo.yaml`, `demo.yaml`, `demo` or any path to a YAML file; `jobs/flink/demo.sql`,
    `demo.sql` or any path to a Flink SQL job."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("params.config", "is required (a shipped config such as jobs/configs/demo.yaml, or a path)")
    root = Path(project_dir)
    candidates = [Path(resolve_path(name.strip(), root))]
    stem = Path(name.strip()).name
    candidates += [root / CONFIGS_DIR / stem, root / CONFIGS_DIR / f"{stem}.yaml", root / FLINK_DIR / stem]
    for c in candidates:
        if c.is_file():
            return c.resolve()
    raise ConfigError("params.config", f"no such config file: {name!r} (shipped: {', '.join(shipped_configs(root))})")


def parse_day(value: Any, key: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and _DAY.match(value.strip()):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError as exc:
            raise ConfigError(key, f"not a date: {value!r} ({exc})") from None
    raise ConfigError(key, f"not a date: {value!r} (use YYYY-MM-DD)")


def overrides_of(params: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The non-empty duration overrides as config sections; a bad duration is named by its config key."""
    sections: dict[str, dict[str, Any]] = {}
    for field, (section, key) in DURATION_OVERRIDES.items():
        value = params.get(field)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        try:
            parse_duration_ms(value)
        except ValueError as exc:
            raise ConfigError(f"{section}.{key}", f"override params.{field}: {exc}") from None
        sections.setdefault(section, {})[key] = value.strip() if isinstance(value, str) else value
    return sections


def load_base_config(config_file: Path, params: Mapping[str, Any]) -> tuple[JobConfig, str | None]:
    """A job config (YAML), or a Flink SQL job (`.sql`) converted with the request's source_path and
    output_path; the generated YAML text is returned too (None for a YAML config)."""
    if config_file.suffix.lower() != ".sql":
        return load_config(config_file), None

    paths = {}
    for field in ("source_path", "output_path"):
        value = params.get(field)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"params.{field}", "is required with a Flink SQL job (the .sql has no paths)")
        paths[field] = value.strip()
    try:
        text, cfg = config_from_flink_sql(config_file, splits=split_list(params.get("splits")), **paths)
    except FlinkSettingsError as exc:
        raise ConfigError("params.config", f"{config_file.name}: {exc}") from None
    return cfg, text


def load_with_overrides(config: str, params: Mapping[str, Any], project_dir: str | Path) -> JobConfig:
    """The config with the request's overrides applied (validated as a whole) and its paths made absolute."""
    return with_overrides(load_base_config(resolve_config_file(config, project_dir), params)[0], params,
                          project_dir)


def with_paths(cfg: JobConfig, project_dir: str | Path) -> JobConfig:
    """The config with its source and output paths made absolute (relative to the project)."""
    return cfg.with_overrides(source={"path": resolve_path(cfg.source.path, project_dir)},
                              output={"path": resolve_path(cfg.output.path, project_dir)})


def with_overrides(cfg: JobConfig, params: Mapping[str, Any], project_dir: str | Path) -> JobConfig:
    """The config with the request's overrides applied (validated as a whole) and its paths made absolute."""
    return with_paths(overridden(cfg, params), project_dir)


def overridden(cfg: JobConfig, params: Mapping[str, Any]) -> JobConfig:
    """The config with the request's duration overrides applied, validated as a whole (paths untouched)."""
    sections = overrides_of(params)
    if not sections:
        return cfg
    try:
        return cfg.with_overrides(**sections)
    except ConfigError as exc:
        raise ConfigError(exc.key, f"{exc.why} (after the overrides of the request)") from None


@dataclass(frozen=True)
class BackfillRequest:
    config_file: str  # the config as given (resolved), for the report
    start: dt.date
    end: dt.date  # inclusive: the last day replayed
    end_of_input: str  # of the last partition; the earlier ones always hold
    allow_missing_partitions: bool
    dq_warn_only: bool
    continue_from_state: bool  # first partition continues the state of the one before, instead of --first
    generated_config: str | None = None  # the YAML converted from a Flink SQL job, kept in the run folder


def validate_request(params: Mapping[str, Any], project_dir: str | Path) -> tuple[JobConfig, BackfillRequest]:
    """Everything that can be checked without Spark, the most basic first: the config (a partitioned source, its
    splits), then the overrides, the range, the switches."""
    config_file = resolve_config_file(params.get("config"), project_dir)
    base, generated = load_base_config(config_file, params)
    base = with_paths(base, project_dir)  # once: the overrides below keep the paths
    check_partitioned(base, config_file)
    try:  # the CLI refuses it too, but only after the DAG has planned and started Spark
        require_declared_splits(base)
    except ConfigError:
        if generated is None:
            raise
        # A Flink SQL script never names its splits: the form's field is what to fill in.
        raise ConfigError("params.splits", "is required with a Flink SQL job: the log's splits, e.g. p0,p1,p2 "
                                           "(the .sql does not name them; a partitioned replay needs them)") from None
    cfg = overridden(base, params)
    start = parse_day(params.get("start_date"), "params.start_date")
    end = parse_day(params.get("end_date"), "params.end_date")
    if end < start:
        raise ConfigError("params.end_date", f"{end} is before the first day {start} (the range is inclusive)")
    eoi = params.get("end_of_input") or "flush"
    if eoi not in END_OF_INPUT:
        raise ConfigError("params.end_of_input", f"unknown value {eoi!r} (one of {', '.join(END_OF_INPUT)})")
    return cfg, BackfillRequest(config_file=str(config_file), start=start, end=end, end_of_input=eoi,
                                allow_missing_partitions=bool(params.get("allow_missing_partitions", False)),
                                dq_warn_only=bool(params.get("dq_warn_only", False)),
                                continue_from_state=bool(params.get("continue_from_state", False)),
                                generated_config=generated)


def check_partitioned(cfg: JobConfig, config_file: Path) -> None:
    """Refuse a config whose (local) source has no `dt=` folders, or does not exist: the backfill replays day
    partitions. Checked before anything else of the request, so that this is what a user reads first."""
    if _URI.match(cfg.source.path):
        return  # a remote source: its folders are listed by the plan task
    source = Path(cfg.source.path)
    if not source.exists():
        raise ConfigError("params.config", f"{config_file.name} reads {cfg.source.path}, which does not exist "
                                           "(yet): the backfill replays its dt=YYYY-MM-DD folders")
    if is_partitioned(cfg) is False:
        raise ConfigError("params.config", f"{config_file.name} reads {cfg.source.path}, which has no dt=YYYY-MM-DD "
                                           f"folders: the backfill replays day partitions (e.g. {DEMO_CONFIG})")


def run_dir(cfg: JobConfig, run_id: str, project_dir: str | Path) -> Path:
    """Where a DAG run keeps its effective config and report: next to the outputs when they are local."""
    base = Path(cfg.output.path) / AIRFLOW_FOLDER if not _URI.match(cfg.output.path) else \
        Path(project_dir) / ".airflow" / "runs"
    return base / run_folder_name(run_id)


def write_effective_config(cfg: JobConfig, path: str | Path, raw: dict[str, Any] | None = None) -> str:
    """The config every Spark job of the run reads: overrides applied, absolute paths, written once (`raw`: its
    to_raw, when the caller has it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("# written by the Airflow run: the job config with the request's overrides\n"
                   + yaml.safe_dump(to_raw(cfg) if raw is None else raw, sort_keys=False))
    tmp.replace(path)
    load_config(path)  # what the jobs will read must parse back to the same config
    return str(path)
