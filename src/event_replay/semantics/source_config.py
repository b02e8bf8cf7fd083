"""The `source` section of a job config: where the event log is, its format, which column plays which role, and
the splits (declared ones, side inputs that never produce watermarks).

`parse_source` refuses a bad key with a ConfigError naming it; `source_raw` writes the section back in the shape
`parse_source` reads.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, get_args

from .config_keys import ConfigError, read_choice, read_mapping, refuse_unknown

SourceFormat = Literal["parquet", "csv"]
FORMATS: tuple[str, ...] = get_args(SourceFormat)  # in the order error messages list them
COLUMN_ROLES = ("split", "offset", "arrival_time", "event_time", "key")


@dataclass(frozen=True)
class SourceConfig:
    path: str
    format: SourceFormat = "parquet"
    # role -> source column; the key's is None for a job without a key (one global group per window: key null)
    columns: Mapping[str, str | None] = field(default_factory=lambda: {r: r for r in COLUMN_ROLES})
    splits: tuple[str, ...] | None = None  # declared splits; None = those seen in the range
    side_inputs: tuple[str, ...] = ()  # inputs that never produce watermarks: count as +inf

    @property
    def keyless(self) -> bool:
        """`columns.key: null`: a windowing query without a key (Flink's windowAll, SQL without GROUP BY keys)."""
        return self.columns["key"] is None

    def role_columns(self) -> dict[str, str]:
        """The roles that read a source column, and the column each reads (the key's, unless keyless)."""
        return {role: name for role, name in self.columns.items() if name is not None}


def parse_source(raw: Mapping[str, Any]) -> SourceConfig:
    p = "source"
    refuse_unknown(raw, {"path", "format", "columns", "splits", "side_inputs"}, p)
    path = raw.get("path")
    if not isinstance(path, str) or not path:
        raise ConfigError(f"{p}.path", "is required (a Parquet or CSV dataset path)")
    fmt = read_choice(raw, "format", FORMATS, "parquet", p)
    cols_raw = read_mapping(raw.get("columns"), f"{p}.columns")
    refuse_unknown(cols_raw, set(COLUMN_ROLES), f"{p}.columns")
    columns = {}
    for role in COLUMN_ROLES:
        name = cols_raw.get(role, role)
        if role == "key" and name is None:
            columns[role] = None  # written `key: null`: no key
            continue
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{p}.columns.{role}", "must be a column name")
        columns[role] = name
    named = [c for c in columns.values() if c is not None]
    if len(set(named)) != len(named):
        raise ConfigError(f"{p}.columns", "two roles map to the same column")
    splits = _split_names(raw, "splits", p)
    side_inputs = _split_names(raw, "side_inputs", p) or ()
    if splits is not None:
        overlap = set(splits) & set(side_inputs)
        if overlap:
            raise ConfigError(f"{p}.side_inputs", f"{sorted(overlap)} also listed in source.splits")
    return SourceConfig(path=path, format=fmt, columns=columns, splits=splits, side_inputs=side_inputs)


def _split_names(raw: Mapping[str, Any], name: str, prefix: str) -> tuple[str, ...] | None:
    value = raw.get(name)
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (str, int)) and str(v) != "" for v in value):
        raise ConfigError(f"{prefix}.{name}", "must be a list of non-empty split names")
    names = tuple(str(v) for v in value)
    if len(set(names)) != len(names):
        raise ConfigError(f"{prefix}.{name}", "lists a split twice")
    return names


def source_raw(s: SourceConfig) -> dict[str, Any]:
    raw: dict[str, Any] = {"path": s.path, "format": s.format, "columns": dict(s.columns)}
    if s.splits is not None:
        raw["splits"] = list(s.splits)
    if s.side_inputs:
        raw["side_inputs"] = list(s.side_inputs)
    return raw
