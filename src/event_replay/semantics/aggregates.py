"""The aggregate expressions the reference model can evaluate: a small, exact subset of Spark SQL.

The Spark engine evaluates any Spark SQL aggregate; tests use this subset so both can be compared.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping

from .model import LogRow

_CALL = re.compile(r"^\s*(count|sum|min|max|avg)\s*\(\s*(\*|[A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$", re.IGNORECASE)


class UnsupportedAggregate(ValueError):
    pass


def _column(row: LogRow, name: str) -> Any:
    core = {"split": row.split, "offset": row.offset, "arrival_time": row.arrival_time,
            "event_time": row.event_time, "key": row.key}
    return core[name] if name in core else row.payload.get(name)


def aggregate_call(expr: str) -> tuple[str, str] | None:
    """(function in lower case, column or `*`) of one count/sum/min/max/avg call over one column; None otherwise."""
    m = _CALL.match(expr)
    return (m.group(1).lower(), m.group(2)) if m else None


def compile_aggregate(expr: str) -> Callable[[Iterable[LogRow]], Any]:
    call = aggregate_call(expr)
    if call is None:
        raise UnsupportedAggregate(f"the reference model evaluates count/sum/min/max/avg of one column, not {expr!r}")
    fn, arg = call
    if arg == "*":
        if fn != "count":
            raise UnsupportedAggregate(f"{fn}(*) is not an aggregate")
        return lambda rows: sum(1 for _ in rows)

    def values(rows: Iterable[LogRow]) -> list[Any]:
        return [v for v in (_column(r, arg) for r in rows) if v is not None]

    if fn == "count":
        return lambda rows: len(values(rows))
    if fn == "sum":
        return lambda rows: (sum(vs) if (vs := values(rows)) else None)
    if fn == "min":
        return lambda rows: (min(vs) if (vs := values(rows)) else None)
    if fn == "max":
        return lambda rows: (max(vs) if (vs := values(rows)) else None)
    return lambda rows: (sum(vs) / len(vs) if (vs := values(rows)) else None)


def compile_aggregates(aggs: Mapping[str, str]) -> Callable[[Iterable[LogRow]], dict[str, Any]]:
    compiled = {name: compile_aggregate(expr) for name, expr in aggs.items()}

    def evaluate(rows: Iterable[LogRow]) -> dict[str, Any]:
        rows = list(rows)
        return {name: f(rows) for name, f in compiled.items()}

    return evaluate
