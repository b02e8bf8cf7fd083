"""The source's role columns (docs/semantics.md, "Quarantine"): which column plays each role, checked; each role
converted (PARSED columns, null where a value does not convert); and the first quarantine reason of a row, in the
documented order. A missing or reserved column is a ConfigError naming the key. Used by io/source.py's read.
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..semantics.config import JobConfig
from ..semantics.config_keys import ConfigError
from ..semantics.source_config import COLUMN_ROLES
from .quarantine import (ARRIVAL_TIME_AFTER_9999, ARRIVAL_TIME_BEFORE_1970, BAD_ARRIVAL_TIME, BAD_EVENT_TIME,
                         BAD_OFFSET, ENGINE_COLUMNS, EVENT_TIME_AFTER_9999, EVENT_TIME_BEFORE_1970, MAX_TIME_MS,
                         MIN_TIME_MS, MISSING_ARRIVAL_TIME, MISSING_EVENT_TIME, MISSING_KEY, MISSING_OFFSET,
                         MISSING_SPLIT, PARSED, REASON_COLUMN, UNDECLARED_SPLIT, offset_to_long, time_to_ms)


@dataclass(frozen=True)
class Roles:
    """How the source's columns map to the roles: the column of each role, their types, the payload columns."""
    cols: dict[str, str]
    types: dict[str, T.DataType]
    payload: list[str]
    event_time_from_source: bool

    def column(self, role: str) -> Column:
        if self.cols[role] is None:  # a keyless job: every row's key is null, one group per window
            return F.lit(None).cast("string")
        return F.col(f"`{self.cols[role]}`")

    def timestamp_roles(self) -> set[str]:
        """The time roles whose column is a Spark timestamp (the outputs give them back as timestamps)."""
        return {r for r in ("arrival_time", "event_time")
                if self.cols[r] in self.types and isinstance(self.types[self.cols[r]], (T.TimestampType,
                                                                                         T.TimestampNTZType))}


def source_roles(raw: DataFrame, cfg: JobConfig) -> Roles:
    """The role columns, checked: each mapped column exists, none is named like an engine column."""
    event_time_from_source = cfg.window.time == "event"
    types = {f.name: f.dataType for f in raw.schema.fields}
    cols = dict(cfg.source.columns)
    needed = [r for r in COLUMN_ROLES if (r != "event_time" or event_time_from_source) and cols[r] is not None]
    for role in needed:
        if cols[role] not in types:
            raise ConfigError(f"source.columns.{role}", f"column {cols[role]!r} is not in the source "
                                                        f"(columns: {', '.join(types)})")
    if REASON_COLUMN in types:
        raise ConfigError("source.path", f"the source has a column named {REASON_COLUMN!r}, which the "
                                         "quarantine output reserves")
    role_source_cols = {cols[r] for r in needed}
    if not event_time_from_source:
        # Ingestion/processing time: the source's event-time column (if any) is not what the replay uses.
        role_source_cols.add(cols["event_time"])
    payload = [c for c in types if c not in role_source_cols]
    for c in payload:
        if c in COLUMN_ROLES or c in ENGINE_COLUMNS:
            raise ConfigError("source.columns", f"source column {c!r} is not mapped to a role but its name is "
                                                "reserved by the engine: map it or rename it")
    return Roles(cols=cols, types=types, payload=payload, event_time_from_source=event_time_from_source)


def parsed_roles(raw: DataFrame, roles: Roles) -> DataFrame:
    """The raw rows plus each role converted (PARSED columns; null where a value cannot be converted)."""
    cols, types = roles.cols, roles.types
    arrival = time_to_ms(roles.column("arrival_time"), types[cols["arrival_time"]], "source.columns.arrival_time")
    if roles.event_time_from_source:
        event = time_to_ms(roles.column("event_time"), types[cols["event_time"]], "source.columns.event_time")
    else:
        event = F.col(f"{PARSED}arrival_time")
    split = roles.column("split")
    if not isinstance(types[cols["split"]], T.StringType):
        split = split.cast("string")
    return raw.withColumn(f"{PARSED}arrival_time", arrival).withColumns({
        f"{PARSED}event_time": event,
        f"{PARSED}split": split,
        f"{PARSED}offset": offset_to_long(roles.column("offset"), types[cols["offset"]]),
        f"{PARSED}key": roles.column("key"),
    })


def quarantine_reason(roles: Roles, cfg: JobConfig) -> Column:
    """The first quarantine reason that applies to a row (null: none), in the documented order."""
    a, e = F.col(f"{PARSED}arrival_time"), F.col(f"{PARSED}event_time")
    s, o, k = F.col(f"{PARSED}split"), F.col(f"{PARSED}offset"), F.col(f"{PARSED}key")
    reason = (F.when(roles.column("arrival_time").isNull(), F.lit(MISSING_ARRIVAL_TIME))
              .when(a.isNull(), F.lit(BAD_ARRIVAL_TIME))
              .when(a < F.lit(MIN_TIME_MS), F.lit(ARRIVAL_TIME_BEFORE_1970))
              .when(a > F.lit(MAX_TIME_MS), F.lit(ARRIVAL_TIME_AFTER_9999)))
    if roles.event_time_from_source:
        reason = (reason.when(roles.column("event_time").isNull(), F.lit(MISSING_EVENT_TIME))
                  .when(e.isNull(), F.lit(BAD_EVENT_TIME))
                  .when(e < F.lit(MIN_TIME_MS), F.lit(EVENT_TIME_BEFORE_1970))
                  .when(e > F.lit(MAX_TIME_MS), F.lit(EVENT_TIME_AFTER_9999)))
    reason = reason.when(s.isNull() | (s == ""), F.lit(MISSING_SPLIT))
    if cfg.source.splits is not None:
        declared = sorted(set(cfg.source.splits) | set(cfg.source.side_inputs))
        reason = reason.when(~s.isin(declared), F.lit(UNDECLARED_SPLIT))
    reason = reason.when(roles.column("offset").isNull(), F.lit(MISSING_OFFSET)).when(o.isNull(), F.lit(BAD_OFFSET))
    return reason if cfg.source.keyless else reason.when(k.isNull(), F.lit(MISSING_KEY))
