"""How the comparison writes times, durations and counts in its explanations and hints (Spark columns and plain
values), so that every sentence reads the same."""
from __future__ import annotations

import datetime as dt

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..semantics.durations import NEG_INF, POS_INF, format_duration


def fmt_ms(c: Column) -> Column:
    return (F.when(c.isNull(), F.lit("?")).when(c >= F.lit(POS_INF), F.lit("+inf"))
            .when(c <= F.lit(NEG_INF), F.lit("-inf"))
            .otherwise(F.date_format(F.timestamp_millis(c), "yyyy-MM-dd HH:mm:ss.SSS")))


def fmt_duration(ms: int | None) -> str:
    return "none" if ms is None else format_duration(ms)

def n_or_0(c: str) -> Column:
    return F.coalesce(F.col(c), F.lit(0))


def rows_text(c: Column, verb: str | None = None) -> Column:
    """`1 row` / `3 rows`, with `was`/`were` after it when `verb` is "was"."""
    one, many = (" row was", " rows were") if verb == "was" else (" row", " rows")
    return F.concat(c.cast("string"), F.when(c == 1, F.lit(one)).otherwise(F.lit(many)))


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def utc(ms: int | None) -> str:
    if ms is None:
        return "?"
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
