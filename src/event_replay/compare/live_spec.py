"""What `replay compare --live` is told about the live job's output, checked before anything is read.

The live output is whatever the production job's sink wrote: one row per firing (or per window, when the sink
upserts), with the key, the window bounds and the aggregates, and where the sink has them a firing index, the
watermark it fired at or the wall-clock time it fired. `--live-columns` maps the roles to the sink's column names:

    key=user_id,window_start=w_start,window_end=w_end,cnt=events,total=amount,fire_watermark=wm

Roles: `key`, `window_start`, `window_end` (required), `fire_index`, `fire_watermark`, `fire_time`, `partition`
(optional) and the config's aggregate names. A role not mapped is looked up under its own name (`partition`: a
`dt` column, as Spark's partition discovery gives for `dt=` folders). When the mapping names no aggregate, every
aggregate of the config must be in the live output under its own name; when it names some, exactly those are
compared. The late side output (`--live-late`) maps `split`, `offset`, `key`, `event_time`, `arrival_time` with
`--live-late-columns` the same way (default: the source's column names). A bad option is `CompareInputError`
(exit 2), naming the option. Reading and normalising: compare/live.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..semantics.config import JobConfig

FORMATS = ("parquet", "csv", "json")
WINDOW_ROLES = ("key", "window_start", "window_end")
OPTIONAL_ROLES = ("fire_index", "fire_watermark", "fire_time", "partition")
LATE_ROLES = ("split", "offset", "key", "event_time", "arrival_time")
DEFAULT_PARTITION_COLUMN = "dt"


class CompareInputError(ValueError):
    """Bad input for `replay compare` (exit 2): `what` names the option or column to fix."""

    def __init__(self, what: str, why: str):
        self.what, self.why = what, why
        super().__init__(f"bad input: {what}: {why}")  # printed after the command's name (exits.guarded)


def parse_mapping(text: str | Sequence[str] | None, option: str) -> dict[str, str]:
    """`role=column,role=column` (repeatable) -> {role: column}; a role given twice or an empty side is refused."""
    if not text:
        return {}
    items = [text] if isinstance(text, str) else list(text)
    out: dict[str, str] = {}
    for item in items:
        for part in str(item).split(","):
            if not part.strip():
                continue
            role, sep, column = part.partition("=")
            role, column = role.strip(), column.strip()
            if not sep or not role or not column:
                raise CompareInputError(option, f"{part.strip()!r} is not ROLE=COLUMN (e.g. key=user_id)")
            if role in out:
                raise CompareInputError(option, f"role {role!r} is mapped twice")
            out[role] = column
    return out


def parse_options(pairs: Sequence[str] | None) -> dict[str, str]:
    """`--live-option KEY=VALUE` (repeatable): options of Spark's reader, e.g. sep=\\t, header=false."""
    out = {}
    for pair in pairs or []:
        k, sep, v = pair.partition("=")
        if not sep or not k.strip():
            raise CompareInputError("--live-option", f"{pair!r} is not KEY=VALUE (e.g. sep=\\t)")
        out[k.strip()] = v.encode().decode("unicode_escape") if "\\" in v else v
    return out


@dataclass(frozen=True)
class LiveSpec:
    """Where the live output is and how to read it."""
    path: str
    format: str = "parquet"
    columns: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, str] = field(default_factory=dict)
    late_path: str | None = None
    late_columns: Mapping[str, str] = field(default_factory=dict)
    keeps_updates: bool = False  # the sink appended every firing (allowed-late re-firings too), not only the last

    @staticmethod
    def from_args(args: Any, path: str) -> "LiveSpec":
        """The spec the `--live-*` options give for the live output at `path` (`replay compare --live`, `replay tune
        --against-live`: the same options, commands/live_options.py)."""
        return LiveSpec(path=path, format=args.live_format, columns=parse_mapping(args.live_columns, "--live-columns"),
                        options=parse_options(args.live_option), late_path=args.live_late,
                        late_columns=parse_mapping(args.live_late_columns, "--live-late-columns"),
                        keeps_updates=args.live_keeps_updates)

    def check(self, cfg: JobConfig) -> None:
        """What can be checked without reading: the format and the roles' names."""
        if self.format not in FORMATS:
            raise CompareInputError("--live-format", f"unknown format {self.format!r} (one of {', '.join(FORMATS)})")
        known = set(WINDOW_ROLES) | set(OPTIONAL_ROLES) | set(cfg.aggregations)
        for role in self.columns:
            if role not in known:
                raise CompareInputError("--live-columns", f"unknown role {role!r} (roles: {', '.join(WINDOW_ROLES)}, "
                                                          f"{', '.join(OPTIONAL_ROLES)}; aggregates of the config: "
                                                          f"{', '.join(cfg.aggregations)})")
        for role in self.late_columns:
            if role not in LATE_ROLES:
                raise CompareInputError("--live-late-columns",
                                        f"unknown role {role!r} (roles: {', '.join(LATE_ROLES)})")

    def check_paths(self) -> None:
        for option, path in (("--live", self.path), ("--live-late", self.late_path)):
            if path and "://" not in path and not Path(path).exists():
                raise CompareInputError(option, f"no such file or folder: {path}")

    def compared_aggregates(self, cfg: JobConfig) -> list[str]:
        mapped = [a for a in cfg.aggregations if a in self.columns]
        return mapped or list(cfg.aggregations)
