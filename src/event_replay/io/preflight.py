"""Checks of the config's paths and the source that need no Spark: run by `replay run` after the config loads and
before the JVM starts, so that a source path that does not exist, an output path that is a file, or a config naming
a column the source does not have costs milliseconds, not a Spark start-up (README: a config is checked before
Spark starts).

Only local paths are looked at (whether they exist; one file's footer or header line); elsewhere, and for anything
subtler, the same checks run again when Spark reads the source (io/source.py prepare_source), with the same
ConfigError."""
from __future__ import annotations

import csv
import glob
import os

import pyarrow.parquet as pq

from ..semantics.config import JobConfig
from ..semantics.config_keys import ConfigError
from ..semantics.source_config import COLUMN_ROLES
from .fs import is_local, local_path


def _first_data_file(path: str) -> str | None:
    for match in sorted(glob.glob(path)):
        if os.path.isfile(match):
            return match
        for root, dirs, files in os.walk(match):
            dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
            for f in sorted(files):
                if not f.startswith(("_", ".")):
                    return os.path.join(root, f)
    return None


def source_columns(cfg: JobConfig) -> list[str] | None:
    """The column names of the source's first data file, or None when they cannot be read without Spark."""
    src = cfg.source
    if not is_local(src.path):
        return None
    first = _first_data_file(local_path(src.path))
    if first is None:
        return None
    try:
        if src.format == "csv":
            with open(first, newline="", encoding="utf-8") as f:
                return next(csv.reader(f), None)

        return list(pq.read_schema(first).names)
    except Exception:  # noqa: BLE001 - unreadable here: Spark will say why when it reads it
        return None


def check_paths(cfg: JobConfig) -> None:
    """A ConfigError naming `source.path` when a local source matches no file or folder (a path or a glob), or
    `output.path` when a local output is a file."""
    source = cfg.source.path
    if is_local(source):
        path = local_path(source)
        if not os.path.exists(path) and not glob.glob(path):
            raise ConfigError("source.path", f"{source} does not exist (no file or folder is there)")
    output = cfg.output.path
    if is_local(output) and os.path.isfile(local_path(output)):
        raise ConfigError("output.path", f"{output} is a file; the output is a folder")


def check_source(cfg: JobConfig) -> None:
    """check_paths, then a ConfigError naming `source.columns.<role>` when the source lacks a role's column."""
    check_paths(cfg)
    names = source_columns(cfg)
    if names is None:
        return
    needed = [r for r in COLUMN_ROLES if (r != "event_time" or cfg.window.time == "event")
              and cfg.source.columns[r] is not None]
    for role in needed:
        col = cfg.source.columns[role]
        if col not in names:
            raise ConfigError(f"source.columns.{role}", f"column {col!r} is not in the source "
                                                        f"(columns: {', '.join(names)})")
