"""The calibrate task's grid as the form gives it: its fields, `replay tune`'s options for them, and the grid the
command would run over the run's range. The validate task checks it (a grid the command would refuse, such as an
idle timeout of 0s, fails the run at once naming the form's field, before anything replays) and the calibrate task
builds its job's arguments from it (calibrate_task.py)."""
from __future__ import annotations

from typing import Any, Mapping

from ..compare.replay_side import Scope
from ..compare.settings_search import scoped_config
from ..semantics.config import JobConfig
from ..tuning.grid import Grid, parse_grid

# The form's grid fields (form.py) -> `replay tune`'s options
GRID_OPTIONS = {"calibrate_max_out_of_orderness": "--max-out-of-orderness",
                "calibrate_idle_timeout": "--idle-timeout"}


def text_param(params: Mapping[str, Any], name: str) -> str | None:
    """A text field of the form, stripped; None when empty."""
    v = params.get(name)
    return v.strip() if isinstance(v, str) and v.strip() else None


def grid_fields(params: Mapping[str, Any]) -> dict[str, str | None]:
    return {field: text_param(params, field) for field in GRID_OPTIONS}


def calibration_grid(cfg: JobConfig, params: Mapping[str, Any], first: str, last: str) -> tuple[Grid, JobConfig] | None:
    """The grid of the calibration over partitions first..last and the config it scopes (as `replay tune
    --partitions` scopes it); None without a live path or a grid. One the command would refuse raises GridError
    naming the form's field."""
    grids = grid_fields(params)
    if not text_param(params, "live_path") or not any(grids.values()):
        return None
    scoped = scoped_config(cfg, Scope(first, last))
    grid, _ = parse_grid(scoped, grids["calibrate_max_out_of_orderness"], grids["calibrate_idle_timeout"], None,
                         options={"max_out_of_orderness": "params.calibrate_max_out_of_orderness",
                                  "idle_timeout": "params.calibrate_idle_timeout"})
    return grid, scoped
