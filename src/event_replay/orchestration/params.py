"""The backfill request: a job config, optional overrides and a day range, validated before anything runs.

Every rejection is a `ConfigError(key, why)`: config keys keep their dotted path (`watermark.idle_timeout`),
request fields are named `params.<field>` so the Airflow task log names what to fix.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml
from airflow.sdk import Param

from ..compare.live import FORMATS
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
DURATION_PATTERN = r"^\s*(\d+\s*(ms|s|min|m|h|d)|P(\d+[WD])*(T(\d+(\.\d+)?[HMS])+)?)\s*$"
ABSOLUTE_PATH = r"^/"
DURATION_EXPECTED = "a duration such as 500ms, 5s, 2m, 1h, 1d or PT5S"  # what the form says when refusing
CONFIG_EXPECTED = "one of the listed configs, or an absolute path"
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
    sections = overrides_of(params)
    if sections:
        try:
            cfg = cfg.with_overrides(**sections)
        except ConfigError as exc:
            raise ConfigError(exc.key, f"{exc.why} (after the overrides of the request)") from None
    return with_paths(cfg, project_dir)


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
    check_partitioned(with_paths(base, project_dir), config_file)
    try:  # the CLI refuses it too, but only after the DAG has planned and started Spark
        require_declared_splits(base)
    except ConfigError:
        if generated is None:
            raise
        # A Flink SQL script never names its splits: the form's field is what to fill in.
        raise ConfigError("params.splits", "is required with a Flink SQL job: the log's splits, e.g. p0,p1,p2 "
                                           "(the .sql does not name them; a partitioned replay needs them)") from None
    cfg = with_overrides(base, params, project_dir)
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


def write_effective_config(cfg: JobConfig, path: str | Path) -> str:
    """The config every Spark job of the run reads: overrides applied, absolute paths, written once."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("# written by the Airflow run: the job config with the request's overrides\n"
                   + yaml.safe_dump(to_raw(cfg), sort_keys=False))
    tmp.replace(path)
    load_config(path)  # what the jobs will read must parse back to the same config
    return str(path)


FIELD_TITLES = {"config": "Job config", "start_date": "First day", "end_date": "Last day",
                "end_of_input": "End of input", "source_path": "Flink SQL job: source path",
                "output_path": "Flink SQL job: output path", "splits": "Flink SQL job: splits",
                **{f: f"Override {section}.{key}" for f, (section, key) in DURATION_OVERRIDES.items()}}


def user_message(exc: ConfigError) -> str:
    """A refusal in the words of the form: the field's title first, then why (config keys stay dotted paths)."""
    why = exc.why
    for field, (section, key) in DURATION_OVERRIDES.items():
        if exc.key == f"{section}.{key}" and f"params.{field}" in why:
            return f"{FIELD_TITLES[field]}: {why.replace(f'override params.{field}: ', '')}"
    field = exc.key.removeprefix("params.")
    if exc.key.startswith("params.") and field in FIELD_TITLES:
        return f"{FIELD_TITLES[field]}: {why}"
    return f"Job config, key {exc.key}: {why}"


def expecting(rule: dict[str, Any], expected: str) -> dict[str, Any]:
    """The schema keywords that refuse what `rule` refuses with a message saying what is `expected`. Airflow shows
    the refusal as jsonschema words it: a `pattern` or `anyOf` as the raw schema (a regex nobody can read), a failed
    `const` as "'<expected>' was expected" with only that const below it; so the rule is the `if`, the message the
    `else` (a null passes: the rule's keywords test strings only)."""
    return {"if": rule, "else": {"const": expected}}


def airflow_params(project_dir: str | Path, *, nightly: bool = False) -> dict[str, Any]:
    """The typed form of the DAGs (Airflow 3 trigger UI). The validate task re-checks everything."""
    configs = backfill_configs(project_dir)
    offered = configs + shipped_flink_jobs(project_dir)
    params: dict[str, Any] = {
        # A choice of the shipped partitioned configs, or the absolute path of any other (checked by validate).
        "config": Param(DEMO_CONFIG if DEMO_CONFIG in configs else (configs[0] if configs else DEMO_CONFIG),
                        type="string", minLength=1, title="Job config", examples=offered,
                        **expecting({"anyOf": [{"enum": offered}, {"pattern": ABSOLUTE_PATH}]},
                                    f"Job config: {CONFIG_EXPECTED}"),
                        description="A config whose source is partitioned by day (dt=YYYY-MM-DD folders) and "
                                    "declares its splits: one of the list (jobs/configs/, or a Flink SQL job in "
                                    "jobs/flink/, converted by the validate task), or the absolute path of any "
                                    "other job config YAML or .sql."),
    }
    for field, what in (("source_path", "event log (source.path)"), ("output_path", "outputs (output.path)")):
        params[field] = Param(None, type=["null", "string"], title=f"Flink SQL job: {field.replace('_', ' ')}",
                              description=f"Only with a .sql job, and required then: the {what}.")
    params["splits"] = Param(None, type=["null", "string"], title=FIELD_TITLES["splits"],
                             description="Only with a .sql job, and required then: the event log's splits, "
                                         "comma-separated (source.splits), e.g. p0,p1,p2,p3.")
    if not nightly:
        params["start_date"] = Param("2024-01-01", type="string", format="date", title=FIELD_TITLES["start_date"],
                                     description="First dt= partition replayed (arrival-time day, UTC).")
        params["end_date"] = Param("2024-01-03", type="string", format="date", title=FIELD_TITLES["end_date"],
                                   description="Last dt= partition replayed (inclusive).")
    for field, (section, key) in DURATION_OVERRIDES.items():
        # The schema refuses a bad duration when the form is submitted (the API answers 400, no run, saying what a
        # duration looks like); the validate task checks the value against the config too (user_message names it).
        params[field] = Param(None, type=["null", "string"], title=FIELD_TITLES[field],
                              **expecting({"pattern": DURATION_PATTERN}, f"{FIELD_TITLES[field]}: {DURATION_EXPECTED}"),
                              description="Empty: the config's value. A duration: 500ms, 5s, 2m, 1h, 1d or ISO "
                                          "PT5S.")
    params["end_of_input"] = Param("hold" if nightly else "flush", type="string", enum=list(END_OF_INPUT),
                                   title="End of input",
                                   description="flush: the last partition ends the stream (every window fires); "
                                               "hold: its state waits for the next partition.")
    params["allow_missing_partitions"] = Param(False, type="boolean", title="Allow missing partitions",
                                               description="Replay days without a dt= folder as empty partitions "
                                                           "(the replay clock runs through them) instead of failing.")
    if not nightly:
        params["continue_from_state"] = Param(False, type="boolean", title="Continue from carried state",
                                              description="Off: the first day starts a new history. On: it "
                                                          "continues the state of the partition before it.")
    if not nightly:
        params["partitions_per_job"] = Param(31, type="integer", minimum=1, title="Partitions per Spark job",
                                             description="Days replayed by one spark-submit, in order. Larger: "
                                                         "fewer JVM starts; smaller: a failed job redoes less.")
        params["dry_run"] = Param(False, type="boolean", title="Dry run: list, write nothing",
                                  description="List the partitions, the Spark jobs, the input files with their "
                                              "rows and bytes, what the output already has, and an estimated "
                                              "time, in the replay task's log and on the Replay runs page; "
                                              "nothing is replayed or written.")
    else:
        params["wait_hours"] = Param(6, type="number", minimum=0, title="Wait for the day's folder (hours)",
                                     description="How long after the day ends the run waits for its dt= folder; "
                                                 "past that it is skipped (replay the day later with a "
                                                 "backfill).")
    params["force"] = Param(False, type="boolean", title="Replay even if already committed",
                            description="Off: partitions that an earlier run with the same config and the same "
                                        "input committed are not replayed again (the log says by which run). On: "
                                        "they are replayed anyway.")
    params["run_data_quality"] = Param(True, type="boolean", title="Data quality and why-report",
                                       description="Off: the data_quality task does nothing, so the run has no GX "
                                                   "suites, no Data Docs and no why-report (one Spark job makes "
                                                   "both). Later: replay quality --config <run folder>/job.yaml "
                                                   "--out <run folder>.")
    params["dq_warn_only"] = Param(False, type="boolean", title="Data quality: warn only",
                                   description="A failed expectation only warns instead of failing the run.")

    params.update(live_params())  # the compare_live task's fields (compare_task.py)
    return params


def live_params() -> dict[str, Any]:
    """The compare_live task's fields (compare_task.py) on the form (Airflow 3 trigger UI), added to the
    backfill DAGs' params (airflow_params)."""
    return {
        "live_path": Param(None, type=["null", "string"], title="Versus live: the live job's output",
                           description="Optional. The live Flink job's sink for these days (a file or folder): the "
                                       "replay is compared with it (replay compare) before the data-quality checks."),
        "live_format": Param("parquet", type="string", enum=list(FORMATS), title="Versus live: format"),
        "live_columns": Param(None, type=["null", "string"], title="Versus live: columns",
                              description="ROLE=COLUMN,... when the sink's names differ: key, window_start, "
                                          "window_end, the aggregates, fire_watermark (e.g. key=user,cnt=events)."),
        "live_late_path": Param(None, type=["null", "string"], title="Versus live: late side output",
                                description="Optional. The live job's late rows, to compare late rows too."),
        "live_keeps_updates": Param(False, type="boolean", title="Versus live: the sink keeps every firing",
                                    description="On: the sink appended each firing (allowed-late re-firings too); "
                                                "off: compare each window's last firing."),
        "live_min_agreement": Param(100.0, type="number", minimum=0, maximum=100,
                                    title="Versus live: minimum agreement per partition (%)",
                                    description="The live parity suite fails a partition below it."),
        "calibrate_max_out_of_orderness": Param(None, type=["null", "string"],
                                                title="Versus live: calibrate delays",
                                                description="Optional grid, e.g. 500ms,1s,5s: ranked by agreement "
                                                            "with the live output (replay tune --against-live)."),
        "calibrate_idle_timeout": Param(None, type=["null", "string"], title="Versus live: calibrate idle timeouts",
                                        description="Optional grid, e.g. none,5s,30s."),
    }
