"""The `output` section of a job config: where the replay's datasets are written, and into how many files the
windows output is spread.

`parse_output` refuses a bad key with a ConfigError naming it; `output_raw` writes the section back in the shape
`parse_output` reads (windows_files only when it is not the default 1).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .config_keys import ConfigError, refuse_unknown


@dataclass(frozen=True)
class OutputConfig:
    path: str
    # Files of the windows output: firings are spread over them by a hash of the key (and sorted in each), so the
    # write uses that many cores; fixed by config, never by the cluster, so the files are the same on any cluster.
    windows_files: int = 1


def parse_output(raw: Mapping[str, Any]) -> OutputConfig:
    refuse_unknown(raw, {"path", "windows_files"}, "output")
    if not isinstance(raw.get("path"), str) or not raw.get("path"):
        raise ConfigError("output.path", "is required")
    files = raw.get("windows_files", 1)
    if isinstance(files, bool) or not isinstance(files, int) or not 1 <= files <= 4096:
        raise ConfigError("output.windows_files", f"must be an integer from 1 to 4096, got {files!r}")
    return OutputConfig(path=raw["path"], windows_files=files)


def output_raw(o: OutputConfig) -> dict[str, Any]:
    raw: dict[str, Any] = {"path": o.path}
    if o.windows_files != 1:
        raw["windows_files"] = o.windows_files
    return raw
