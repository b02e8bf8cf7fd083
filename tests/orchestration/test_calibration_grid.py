"""The calibrate task's grid from the form (orchestration/calibration_grid.py): none without a live path or a grid
field, the grid `replay tune --partitions` would run over the range, a refusal naming the form's field."""
from __future__ import annotations

import pytest

from event_replay.orchestration.calibration_grid import calibration_grid, grid_fields, text_param
from event_replay.semantics.config import load_config
from event_replay.tuning.grid import GridError

FORM = {"live_path": " jobs/live/demo/firings ", "calibrate_max_out_of_orderness": "500ms,1s",
        "calibrate_idle_timeout": "  "}


def test_the_grid_of_the_form_over_the_range(project):
    cfg = load_config(project[1])
    assert text_param(FORM, "live_path") == "jobs/live/demo/firings" and text_param(FORM, "calibrate_idle_timeout") is None
    assert grid_fields(FORM) == {"calibrate_max_out_of_orderness": "500ms,1s", "calibrate_idle_timeout": None}
    grid, scoped = calibration_grid(cfg, FORM, "2024-01-01", "2024-01-02")
    assert grid.name == "delay_500ms-1s__idle_5s__lateness_2s"  # the config's idle timeout and lateness: one value
    assert (scoped.replay.start_ms, scoped.replay.end_ms) == (1704067200000, 1704240000000)  # the two days' span
    assert calibration_grid(cfg, {**FORM, "live_path": None}, "2024-01-01", "2024-01-02") is None
    assert calibration_grid(cfg, {**FORM, "calibrate_max_out_of_orderness": None}, "2024-01-01", "2024-01-01") is None


def test_a_grid_no_config_takes_is_refused_naming_the_field(project):
    with pytest.raises(GridError) as e:
        calibration_grid(load_config(project[1]), {**FORM, "calibrate_idle_timeout": "0s,5s"}, "2024-01-01",
                         "2024-01-01")
    assert e.value.option == "params.calibrate_idle_timeout"
