"""The `aggregations` section of a job config: output column name -> Spark SQL aggregate expression.

`parse_aggregations` refuses, with a ConfigError naming the column, a name that is not an identifier or that a
column of the windows output already has, and an expression of the wrong shape (caught before Spark parses it:
`aggregate_syntax_problem`). The section is written back as it is held, a plain dict.
"""
from __future__ import annotations

import re
from typing import Any

from .config_keys import ConfigError, read_mapping

_AGG_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_AGG_CALL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*\(")
_RESERVED_OUTPUT_COLUMNS = {"key", "window_start", "window_end", "fire_index", "fire_watermark", "fire_reason"}


def parse_aggregations(raw: Any) -> dict[str, str]:
    p = "aggregations"
    aggs = read_mapping(raw, p)
    if not aggs:
        raise ConfigError(p, "at least one aggregate is required, e.g. {cnt: count(*)}")
    out = {}
    for name, expr in aggs.items():
        if not isinstance(name, str) or not _AGG_NAME.match(name):
            raise ConfigError(f"{p}.{name}", "output column names are identifiers ([A-Za-z_][A-Za-z0-9_]*)")
        if name in _RESERVED_OUTPUT_COLUMNS:
            raise ConfigError(f"{p}.{name}", "clashes with a column of the windows output")
        if not isinstance(expr, str) or not expr.strip():
            raise ConfigError(f"{p}.{name}", "must be a Spark SQL aggregate expression such as sum(value)")
        problem = aggregate_syntax_problem(expr)
        if problem:
            raise ConfigError(f"{p}.{name}", f"{problem} in {expr!r}")
        out[name] = expr.strip()
    return out


def aggregate_syntax_problem(expr: str) -> str | None:
    """The shape errors caught before Spark parses the expression: parentheses (outside quotes) that close before
    they open or never close, an operator dangling at either end, no function call at all."""
    depth, quote = 0, None
    for ch in expr:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return "a parenthesis closes before it opens"
    if depth or quote:
        return "unbalanced parentheses or quotes"
    text = expr.strip()
    if text[0] in "+-*/%,=<>|&" or text[-1] in "+-*/%,=<>|&^!":
        return "an operator without an operand"
    if not _AGG_CALL.search(text):
        return "no aggregate function call (e.g. sum(value))"
    return None
