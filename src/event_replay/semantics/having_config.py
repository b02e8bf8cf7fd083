"""The `having` key of a job config: a Spark SQL boolean over a firing's columns, `key` and the aggregations' output
names (`"cnt > 2"`), that decides which firings are written (docs/semantics.md, "HAVING").

It stands where a Flink SQL `HAVING` (or a DataStream `.filter(...)` after the window function) stands: after the
window operator, so it changes nothing the window operator does; every firing, written or not, keeps its fire
index, and a late row is late whether its window's firings pass or not. A null predicate drops the firing, as
SQL's HAVING does. Checked like `filter` (filter_config.py: one expression, no aggregate, window function,
subquery or nondeterministic call), plus: every column it reads is `key` or an aggregation's name.
"""
from __future__ import annotations

from typing import Any, Mapping

from sqlglot import exp

from .config_keys import ConfigError
from .filter_config import filter_tree

KEY = "having"


def parse_having(raw: Any, aggregations: Mapping[str, str]) -> str | None:
    """The predicate as written (stripped), or None when absent; refused naming `having` when it cannot be one."""
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError(KEY, "must be a Spark SQL boolean over the firing's columns (key and the aggregations' "
                               "names), e.g. \"cnt > 2\"")
    text = raw.strip()
    known = {"key", *aggregations}
    for column in filter_tree(text, KEY).find_all(exp.Column):
        name = column.parts[0].name
        if name not in known:
            raise ConfigError(KEY, f"reads {name!r}, which is not a column of a firing (the key or one of the "
                                   f"aggregations: {', '.join(sorted(known))}): {text!r}")
    return text
