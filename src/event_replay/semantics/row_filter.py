"""The row filter as the reference model evaluates it: a small, exact subset of Spark SQL's three-valued logic.

`RowFilter(text, columns).keeps(row)` says whether a log row reaches the windows (docs/semantics.md, "Row filter"):
only when the predicate is true; false and null (unknown) drop it, as SQL's WHERE does. Columns are the log's
columns as the source names them (`source.columns` maps each role to its source name; every other name is a payload
column, null when the row has none). The subset: literals, columns, `= <> != < <= > >= <=>`, AND/OR/NOT, IS [NOT]
NULL, [NOT] IN, [NOT] BETWEEN, [NOT] LIKE, `+ - * %` and unary minus, over numbers, strings and booleans of one
kind per comparison. Anything else is `UnsupportedFilter`: the Spark engine evaluates any Spark SQL boolean, tests
use this subset so both can be compared (as semantics/aggregates.py does for aggregates). `FiringFilter` is the
same evaluation of the job's `having` over a firing's columns.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from sqlglot import exp

from .filter_config import filter_tree
from .model import LogRow

_COMPARISONS: dict[type, Callable[[Any, Any], bool]] = {
    exp.EQ: lambda a, b: a == b, exp.NEQ: lambda a, b: a != b, exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b, exp.LT: lambda a, b: a < b, exp.LTE: lambda a, b: a <= b,
}
_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    exp.Add: lambda a, b: a + b, exp.Sub: lambda a, b: a - b, exp.Mul: lambda a, b: a * b,
}


class UnsupportedFilter(ValueError):
    pass


class RowFilter:
    """A job's filter over the rows of a log whose roles have the source names `columns` (role -> name)."""

    def __init__(self, text: str, columns: Mapping[str, str], key: str = "filter"):
        self.text = text
        self.tree = filter_tree(text, key)
        self.role_of = {name: role for role, name in columns.items()}

    def keeps(self, row: Any) -> bool:
        """True only when the predicate is true for the row (null drops it)."""
        value = self._eval(self.tree, row)
        if value is not None and not isinstance(value, bool):
            raise UnsupportedFilter(f"{self.text!r} is not a boolean (got {value!r})")
        return value is True

    def _column(self, name: str, row: LogRow) -> Any:
        role = self.role_of.get(name)
        return getattr(row, role) if role is not None else row.payload.get(name)

    def _eval(self, node: exp.Expr, row: LogRow) -> Any:
        value = self._eval_positive(node, row)
        if node.args.get("negate"):  # sqlglot writes `a NOT LIKE p` as a negated Like (IN, BETWEEN alike)
            return None if value is None else not _boolean(value)
        return value

    def _eval_positive(self, node: exp.Expr, row: LogRow) -> Any:
        if isinstance(node, exp.Paren):
            return self._eval(node.this, row)
        if isinstance(node, exp.Column):
            return self._column(node.name, row)
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null)):
            return _literal(node)
        if isinstance(node, exp.Not):
            v = self._eval(node.this, row)
            return None if v is None else not _boolean(v)
        if isinstance(node, (exp.And, exp.Or)):
            return _connective(isinstance(node, exp.And), self._eval(node.this, row), self._eval(node.expression, row))
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise UnsupportedFilter(f"IS {node.expression.sql('spark')}")
            return self._eval(node.this, row) is None
        if isinstance(node, exp.NullSafeEQ):
            a, b = self._eval(node.this, row), self._eval(node.expression, row)
            return a is None and b is None or (a is not None and b is not None and _compare(exp.EQ, a, b))
        if type(node) in _COMPARISONS:
            return _compare(type(node), self._eval(node.this, row), self._eval(node.expression, row))
        if isinstance(node, exp.In):
            return self._in(node, row)
        if isinstance(node, exp.Between):
            v = self._eval(node.this, row)
            low, high = self._eval(node.args["low"], row), self._eval(node.args["high"], row)
            return _connective(True, _compare(exp.GTE, v, low), _compare(exp.LTE, v, high))
        if isinstance(node, exp.Like) and node.args.get("escape") is None:
            return _like(self._eval(node.this, row), self._eval(node.expression, row))
        if isinstance(node, exp.Neg):
            v = self._eval(node.this, row)
            return None if v is None else -_number(v)
        if type(node) in _ARITHMETIC or isinstance(node, exp.Mod):
            return _arithmetic(node, self._eval(node.this, row), self._eval(node.expression, row))
        raise UnsupportedFilter(f"the reference model does not evaluate {node.sql('spark')!r}")

    def _in(self, node: exp.In, row: LogRow) -> bool | None:
        if node.args.get("query") is not None or not node.expressions:
            raise UnsupportedFilter(f"{node.sql('spark')!r}")
        v = self._eval(node.this, row)
        if v is None:
            return None
        seen_null = False
        for item in node.expressions:
            candidate = self._eval(item, row)
            if candidate is None:
                seen_null = True
            elif _compare(exp.EQ, v, candidate):
                return True
        return None if seen_null else False


class FiringFilter(RowFilter):
    """The job's `having` over a firing's columns (`key` and the aggregations' names, a mapping): the same subset
    and the same three-valued logic; a firing is written only when it is true (having_config.py)."""

    def __init__(self, text: str):
        super().__init__(text, {}, key="having")

    def _column(self, name: str, row: Mapping[str, Any]) -> Any:
        return row[name]


def _literal(node: exp.Expr) -> Any:
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if node.is_string:
        return node.this
    text = node.this
    return int(text) if re.fullmatch(r"\d+", text) else float(text)


def _boolean(v: Any) -> bool:
    if not isinstance(v, bool):
        raise UnsupportedFilter(f"{v!r} used as a boolean")
    return v


def _connective(is_and: bool, a: Any, b: Any) -> bool | None:
    """SQL's AND / OR: false (AND) or true (OR) decides alone; otherwise an unknown side makes it unknown."""
    decisive = not is_and
    sides = [None if v is None else _boolean(v) for v in (a, b)]
    if decisive in sides:
        return decisive
    return None if None in sides else not decisive


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    raise UnsupportedFilter(f"a value of type {type(v).__name__}")


def _compare(op: type, a: Any, b: Any) -> bool | None:
    if a is None or b is None:
        return None
    if _kind(a) != _kind(b):
        # Spark would cast one side (string to number, ...): casts are outside the subset.
        raise UnsupportedFilter(f"comparing a {_kind(a)} with a {_kind(b)}")
    return _COMPARISONS[op](a, b)


def _number(v: Any) -> int | float:
    if _kind(v) != "number":
        raise UnsupportedFilter(f"arithmetic on a {_kind(v)}")
    return v


def _arithmetic(node: exp.Expr, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    a, b = _number(a), _number(b)
    if isinstance(node, exp.Mod):
        if b == 0 or not (isinstance(a, int) and isinstance(b, int)):
            raise UnsupportedFilter("% of a zero divisor or of a non-integer")
        r = abs(a) % abs(b)
        return r if a >= 0 else -r  # Java's remainder: the sign of the dividend
    return _ARITHMETIC[type(node)](a, b)


def _like(value: Any, pattern: Any) -> bool | None:
    """LIKE with `%` and `_` (a backslash escapes the next character, as Spark's default escape)."""
    if value is None or pattern is None:
        return None
    if _kind(value) != "string" or _kind(pattern) != "string":
        raise UnsupportedFilter("LIKE on a value that is not a string")
    regex, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            regex.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        regex.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.fullmatch("".join(regex), value, flags=re.DOTALL) is not None
