"""The replay's `having` from a windowing query's HAVING: a filter on the window's firings (docs/semantics.md,
"HAVING").

The condition is rewritten over the firing's columns: every aggregate expression that the SELECT list computes
(compared as written, case aside) becomes that output column's name, the key column becomes `key`. What is left
must be comparisons, AND / OR / NOT, IS [NOT] NULL, IN, BETWEEN, literals and `+ - *` over them: an aggregate the
SELECT list does not compute (the replay writes only its output columns), a window column, another column or a
division (Flink divides integers as integers, Spark does not) is refused, naming it.
"""
from __future__ import annotations

from sqlglot import exp

from .dialect import FlinkSQL
from .script import WINDOW_COLUMNS, Window
from .script_text import line_of, user_text
from .settings import Derived, FlinkSettingsError

_ALLOWED = (exp.Column, exp.Literal, exp.Boolean, exp.Null, exp.Paren, exp.And, exp.Or, exp.Not, exp.EQ, exp.NEQ,
            exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Is, exp.In, exp.Between, exp.Add, exp.Sub, exp.Mul, exp.Neg,
            exp.Identifier, exp.Tuple)


def having_into(derived: Derived, window: Window, key: str | None, outputs: dict[str, exp.Expr]) -> None:
    """`having` (with its comment) from the windowing query's HAVING; nothing when there is none."""
    clause = window.select.args.get("having") if window.select is not None else None
    if clause is None:
        return
    text = lambda n: user_text(n, window.statement)  # noqa: E731
    line = line_of(clause, window.line)
    shown = f"HAVING {clause.this.sql(FlinkSQL)}"  # whole (a span of the text can miss a leading NOT)
    by_text = {_written(e): name for name, e in outputs.items()}

    def rewrite(node: exp.Expr) -> exp.Expr:
        name = by_text.get(_written(node))
        if name is not None:
            return exp.column(name)
        if isinstance(node, exp.AggFunc):
            raise FlinkSettingsError(shown, f"{text(node)} is not an output column of the query: the replay writes "
                                     "and filters its SELECT list only (select it, with an alias)", line)
        if isinstance(node, exp.Column):
            if key is not None and node.name.lower() == key.lower():
                return exp.column("key")
            what = "a window column: it filters windows by their bounds" if node.name.lower() in WINDOW_COLUMNS \
                else "not the key nor an aggregate of the SELECT list"
            raise FlinkSettingsError(shown, f"{node.name} is {what}: not mapped", line)
        return node

    condition = clause.this.transform(rewrite)
    for node in condition.walk():
        if not isinstance(node, _ALLOWED):
            raise FlinkSettingsError(shown, f"{text(node) if node.meta else node.sql(FlinkSQL)}: only comparisons, "
                                     "AND / OR / NOT, IS NULL, IN, BETWEEN and + - * of the output columns are "
                                     "mapped", line)
    derived.set("having", condition.sql("spark"), f"{shown} (line {line}): firings dropped after the window")


def _written(node: exp.Expr) -> str:
    """An expression as written, for matching a HAVING's aggregate to the SELECT list's (case and spacing aside)."""
    return node.sql(FlinkSQL, normalize=True).lower()
