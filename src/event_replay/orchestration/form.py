"""The DAGs' form (Airflow 3 trigger UI): its fields, the schema that refuses a bad value when the form is submitted,
and a refusal of the validate task (params.py) in the form's words. What a field means is checked again by the
validate task; the form only says early what a value must look like.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow.sdk import Param

from ..compare.live_spec import FORMATS
from ..semantics.config_keys import ConfigError
from ..semantics.replay_range_config import END_OF_INPUT
from .params import DEMO_CONFIG, DURATION_OVERRIDES, backfill_configs, shipped_flink_jobs

DURATION_PATTERN = r"^\s*(\d+\s*(ms|s|min|m|h|d)|P(\d+[WD])*(T(\d+(\.\d+)?[HMS])+)?)\s*$"
ABSOLUTE_PATH = r"^/"
DURATION_EXPECTED = "a duration such as 500ms, 5s, 2m, 1h, 1d or PT5S"  # what the form says when refusing
CONFIG_EXPECTED = "one of the listed configs, or an absolute path"
GRID_EXPECTED = "comma-separated durations such as 500ms,1s,5s"
# A grid of durations (the watermark_tuning DAG's and the calibrate task's); an idle timeout may be none
_D = r"(\d+\s*(ms|s|min|m|h|d)|[Pp][0-9A-Za-z.]+|\d+)"
GRID_PATTERN = rf"^\s*{_D}(\s*,\s*{_D})*\s*$"
IDLE_GRID_PATTERN = rf"^\s*({_D}|[Nn][Oo][Nn][Ee])(\s*,\s*({_D}|[Nn][Oo][Nn][Ee]))*\s*$"


FIELD_TITLES = {"config": "Job config", "start_date": "First day", "end_date": "Last day",
                "end_of_input": "End of input", "source_path": "Flink SQL job: source path",
                "output_path": "Flink SQL job: output path", "splits": "Flink SQL job: splits",
                "calibrate_max_out_of_orderness": "Versus live: calibrate delays",
                "calibrate_idle_timeout": "Versus live: calibrate idle timeouts",
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

    params.update(live_params())  # the compare_live and calibrate tasks' fields
    return params


def live_params() -> dict[str, Any]:
    """The "Versus live" fields on the form (Airflow 3 trigger UI), added to the backfill DAGs' params
    (airflow_params): the live output, read by the compare_live task (compare_task.py) and the calibrate task
    (calibrate_task.py), and the calibrate task's grids."""
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
        # The calibrate task's grids (calibrate_task.py), refused when the form is submitted if malformed
        "calibrate_max_out_of_orderness": Param(None, type=["null", "string"],
                                                title=FIELD_TITLES["calibrate_max_out_of_orderness"],
                                                **expecting({"pattern": GRID_PATTERN},
                                                            f"{FIELD_TITLES['calibrate_max_out_of_orderness']}: "
                                                            f"{GRID_EXPECTED}"),
                                                description="Optional grid, e.g. 500ms,1s,5s: with a live path, the "
                                                            "calibrate task ranks it by agreement with the live "
                                                            "output (replay tune --against-live), before the "
                                                            "comparison, whose settings search reuses its replays."),
        "calibrate_idle_timeout": Param(None, type=["null", "string"], title=FIELD_TITLES["calibrate_idle_timeout"],
                                        **expecting({"pattern": IDLE_GRID_PATTERN},
                                                    f"{FIELD_TITLES['calibrate_idle_timeout']}: {GRID_EXPECTED}"),
                                        description="Optional grid, e.g. none,5s,30s (none: no idleness)."),
    }
