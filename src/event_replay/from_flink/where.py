"""The replay's `filter` from a windowing query: its own WHERE and the WHERE of every view it reads, ANDed.

Each clause is translated against the columns it reads (the windowing query's source, or the source a view selects
from: query.py `Source.filters`) by predicate.py, and keeps its line for the config's comment. A condition on the
window's bounds (window_start, ...) would filter firings, not rows: refused. A processing-time function in a
condition would select other rows on every run: refused.
"""
from __future__ import annotations

from sqlglot import exp

from .predicate import PredicateTranslator
from .query import column_resolver, processing_time_call
from .query_source import Source, clause_text
from .script import WINDOW_COLUMNS, Window
from .script_text import line_of, user_text
from .settings import Derived, FlinkSettingsError


def filter_into(derived: Derived, window: Window, source: Source) -> None:
    """`filter` (with its comment) from the WHERE clauses, innermost view first; nothing when there is none."""
    clauses = [(cond, inner, view.statement, f"{view.kind} {view.name}", line_of(cond, view.line))
               for cond, inner, view in source.filters]
    own = window.select.args.get("where") if window.select is not None else None
    if own is not None:
        clauses.append((own.this, source, window.statement, "the windowing query", line_of(own, window.line)))
    if not clauses:
        return
    parts, origins = [], []
    for cond, inner, statement, where, line in clauses:
        parts.append(_translated(cond, inner, window, statement, line))
        origins.append(f"{clause_text('where', exp.Where(this=cond), statement)} ({where}, line {line})")
    # Several clauses are ANDed: one whose top is an OR keeps it inside parentheses.
    sql = parts[0] if len(parts) == 1 else " AND ".join(
        f"({p})" if isinstance(cond, exp.Or) else p for p, (cond, *_) in zip(parts, clauses))
    derived.set("filter", sql, "; ".join(origins) + ": rows dropped after the watermark is assigned")


def _translated(cond: exp.Expr, inner: Source, window: Window, statement, line: int) -> str:
    text = lambda n: user_text(n, statement)  # noqa: E731
    for column in cond.find_all(exp.Column):
        if column.name.lower() in WINDOW_COLUMNS and column.name.lower() not in inner.columns:
            raise FlinkSettingsError(f"WHERE {text(cond)}", f"a condition on {column.name} filters windows, not "
                                     "rows: not mapped", line)
    moving = processing_time_call(cond)
    if moving is not None:
        raise FlinkSettingsError(f"WHERE {text(cond)}", f"{text(moving)} is the processing time: the rows it keeps "
                                 "differ from run to run: not mapped", line)
    translator = PredicateTranslator(column_resolver(inner, window, line, statement), text, line)
    return translator.predicate(cond)
