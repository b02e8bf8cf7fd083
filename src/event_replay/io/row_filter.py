"""The job's row filter on the source as read (docs/semantics.md, "Row filter"; the key: semantics/filter_config.py).

The IO layer evaluates the filter over the log's own columns (names and types as read, so a Flink SQL `WHERE` on a
timestamp column means what it says) and hands each clean row to the engine with its verdict in the column
`WINDOWED`: true only when the predicate is true (null drops the row, as SQL's WHERE does). Every row still drives
the watermarks; the engine keeps only the windowed ones for the windows and the late output (engine/__init__.py).
Without a filter no column is added: a replay without one runs the plan it always ran.

`windowed_flag` checks the filter against the source when the replay is planned: a column the source lacks, an
expression Spark cannot analyse, or one that is not a boolean is a ConfigError on `filter`, in one line.
"""
from __future__ import annotations

import re

from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..semantics.config import JobConfig
from ..semantics.config_keys import ConfigError
from ..semantics.filter_config import KEY, filter_columns

WINDOWED = "__windowed"  # the filter's verdict on a clean row (present only when the job has a filter)


def windowed_flag(cfg: JobConfig, parsed: DataFrame, source_columns: list[str]) -> Column | None:
    """The verdict column over `parsed` (the rows as read, plus the engine's own columns), checked against the
    source's columns `source_columns`; None when the job has no filter."""
    text = cfg.filter
    if text is None:
        return None
    known = {c.lower() for c in source_columns}  # Spark resolves names case-insensitively
    for name in filter_columns(text):
        if name.lower() not in known:
            raise ConfigError(KEY, f"column {name!r} is not in the source (columns: {', '.join(source_columns)})")
    try:
        predicate = F.expr(text)
        kind = parsed.select(predicate.alias("p")).schema["p"].dataType
    except (AnalysisException, ParseException) as exc:
        raise ConfigError(KEY, f"Spark cannot evaluate {text!r}: {_first_sentence(str(exc))}") from None
    if not isinstance(kind, T.BooleanType):
        raise ConfigError(KEY, f"{text!r} is a {kind.simpleString()}, not a boolean")
    return F.coalesce(predicate, F.lit(False))


def _first_sentence(message: str) -> str:
    """Spark's error without its plan and SQLSTATE: the line a user reads."""
    line = message.strip().splitlines()[0] if message.strip() else "analysis failed"
    return re.split(r"\s*SQLSTATE", line)[0].strip()
