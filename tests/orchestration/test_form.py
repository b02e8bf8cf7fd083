"""The DAGs' form (orchestration/form.py): the fields of a backfill and of the nightly run, the schema's refusal
of a bad duration and a relative config path when the form is submitted (jsonschema, as Airflow checks a Param), and
a validate task's refusal in the form's words. The DAGs' own forms: test_dags.py."""
from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from event_replay.orchestration.form import DURATION_EXPECTED, airflow_params, user_message
from event_replay.semantics.config_keys import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _refusal(param, value) -> str | None:
    try:
        jsonschema.validate(value, param.schema)
    except jsonschema.ValidationError as exc:
        return exc.message
    return None


def test_a_backfill_asks_for_days_and_the_nightly_run_for_its_wait():
    backfill, nightly = airflow_params(ROOT), airflow_params(ROOT, nightly=True)
    assert {"start_date", "end_date", "dry_run", "partitions_per_job", "continue_from_state"} <= set(backfill)
    assert "wait_hours" in nightly and not {"start_date", "dry_run"} & set(nightly)
    assert backfill["end_of_input"].value == "flush" and nightly["end_of_input"].value == "hold"
    assert {"live_path", "live_min_agreement", "calibrate_idle_timeout"} <= set(backfill) & set(nightly)


@pytest.mark.parametrize("value,ok", [("5s", True), ("PT0.5S", True), ("1 min", True), (None, True),
                                      ("5 sec", False), ("soon", False)])
def test_a_duration_field_refuses_what_is_no_duration_saying_what_one_is(value, ok):
    refusal = _refusal(airflow_params(ROOT)["idle_timeout"], value)
    assert (refusal is None) == ok, refusal
    if not ok:
        assert DURATION_EXPECTED in refusal


def test_the_config_is_a_listed_one_or_an_absolute_path():
    config = airflow_params(ROOT)["config"]
    assert _refusal(config, config.value) is None and _refusal(config, "/srv/jobs/any.yaml") is None
    assert "one of the listed configs, or an absolute path" in _refusal(config, "jobs/configs/nope.yaml")


def test_a_refusal_names_the_field_as_the_form_titles_it():
    assert user_message(ConfigError("params.end_date", "not a date")) == "Last day: not a date"
    assert user_message(ConfigError("watermark.idle_timeout", "override params.idle_timeout: not a duration")) \
        == "Override watermark.idle_timeout: not a duration"
    assert user_message(ConfigError("window.size", "must be positive")) == "Job config, key window.size: must be positive"
