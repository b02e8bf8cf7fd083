"""What a windowing query reads: a CREATE TABLE, or views over one (CREATE VIEW, or a CTE of the query:
`with_ctes`), followed down to the table (`resolve_source`).

A view may select, rename, compute or filter (WHERE) columns of one table or view; one that joins, aggregates,
windows or removes rows is refused, naming it (FlinkSettingsError with its line). `Source.columns` says what each
visible column is: a table column, or the view expression that computes it; each view's WHERE is kept with the
columns it reads (`Source.filters`), for the replay's `filter` (where.py). `table_column` refuses a computed one.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from sqlglot import exp

from .script import Script, Table, View, Window
from .script_text import line_of, user_text
from .settings import FlinkSettingsError


@dataclass
class Source:
    """What a window reads: a table, through zero or more views. `columns` maps each visible column (lower case)
    to the table column it is (its name) or to the view expression that computes it (and the source of that)."""
    table: Table
    columns: dict[str, "str | tuple[exp.Expr, Source, View]"]
    views: list[View] = field(default_factory=list)
    # Each view's WHERE, innermost first, with the source whose columns it reads and the view it is written in.
    filters: list[tuple[exp.Expr, "Source", View]] = field(default_factory=list)

    def describe(self) -> str:
        chain = " -> ".join(f"{v.kind} {v.name} (line {v.line})" for v in reversed(self.views))
        return f"{chain} -> table {self.table.name}" if chain else f"table {self.table.name}"


def resolve_source(name: str, script: Script, construct: str, line: int, depth: int = 0) -> Source:
    """The table (through views) a window or a view reads; refused naming the view that cannot be followed."""
    key = name.lower()
    if key in script.tables:
        table = script.tables[key]
        return Source(table, {c: col.name for c, col in table.columns.items()})
    view = script.views.get(key)
    if view is None and key in script.unparsed_tables:
        table_line, why = script.unparsed_tables[key]
        raise FlinkSettingsError(f"CREATE TABLE {name}", f"{why}, so the table that {construct} reads (line {line}) "
                                 "cannot be read", table_line)
    if view is None or depth > 20:
        hint = _unparsed_hint(script)
        raise FlinkSettingsError(construct, "not a CREATE TABLE or CREATE VIEW (nor a CTE) of the script (catalog "
                                 "tables are not followed)" + hint, line)
    sel, where = view.select, f"{view.kind} {view.name} (line {view.line})"
    text = lambda n: user_text(n, view.statement)  # noqa: E731
    if sel is None:
        raise FlinkSettingsError(where, "not a plain SELECT of one table (UNION, VALUES, ...): not followed", line)
    if any(isinstance(n, exp.Anonymous) and n.name.upper() == "TABLE" for n in sel.walk()):
        raise FlinkSettingsError(where, "a window aggregation: a window over another window's output (cascading "
                                 "windows) is not mapped", line)
    for clause, why in (("joins", "joins tables"), ("group", "aggregates rows"),
                        ("having", "filters groups"), ("distinct", "removes duplicate rows")):
        node = sel.args.get(clause)
        if node:
            node = node[0] if isinstance(node, list) else node
            raise FlinkSettingsError(f"{where}: {clause_text(clause, node, view.statement)}", f"the view {why}: "
                                     "the replay windows every row of one table as it is: not mapped",
                                     line_of(node, view.line))
    if any(isinstance(n, exp.Window) for n in sel.walk()):
        raise FlinkSettingsError(where, "an OVER aggregation in the view: not mapped", view.line)
    src_from = sel.args.get("from") or sel.args.get("from_")
    inner_node = src_from.this if src_from is not None else None
    if not isinstance(inner_node, exp.Table) or (isinstance(inner_node.this, exp.Anonymous)):
        what = text(inner_node) if inner_node is not None else "no FROM"
        cascading = inner_node is not None and "TABLE(" in what.upper().replace(" ", "")
        why = "a window of another window's output (cascading windows) is not mapped" if cascading \
            else "not a table or view: not followed"
        raise FlinkSettingsError(f"{where}: FROM {what}", why, view.line)
    inner = resolve_source(inner_node.name, script, f"{where}: FROM {inner_node.name}", view.line, depth + 1)
    names: list[str] = []
    values: list = []
    for item in sel.expressions:
        if isinstance(item, exp.Star):
            names += list(inner.columns)
            values += list(inner.columns.values())
            continue
        value = item.unalias()
        alias = item.alias_or_name
        if isinstance(value, exp.Column) and value.name.lower() in inner.columns:
            values.append(inner.columns[value.name.lower()])
        elif isinstance(value, exp.Column):
            raise FlinkSettingsError(f"{where}: {text(item)}", f"{value.name} is not a column of {inner.describe()}",
                                     line_of(item, view.line))
        else:
            values.append((value, inner, view))
        names.append(alias.lower())
    if view.columns is not None:
        if len(view.columns) != len(names):
            raise FlinkSettingsError(where, f"names {len(view.columns)} columns for {len(names)} selected", view.line)
        names = [c.lower() for c in view.columns]
    condition = sel.args.get("where")
    filters = inner.filters + ([(condition.this, inner, view)] if condition is not None else [])
    return Source(inner.table, dict(zip(names, values)), [view] + inner.views, filters)


def with_ctes(script: Script, window: Window) -> Script:
    """The script as the window's query sees it: its CTEs (`WITH f AS (SELECT ...)`, of the query or of a statement
    around it) followed as views of that statement, shadowing views and tables of the same name."""
    ctes: dict[str, View] = {}
    node = window.select
    while node is not None:
        for cte in (node.args.get("with_") or node.args.get("with") or exp.With()).expressions:
            alias = cte.args.get("alias")
            columns = [c.name for c in alias.columns] if alias is not None and alias.columns else None
            select = cte.this if isinstance(cte.this, exp.Select) else None
            ctes.setdefault(cte.alias.lower(), View(cte.alias, line_of(cte, window.line), select, columns,
                                                    window.statement, kind="CTE"))
        node = node.parent
    if not ctes:
        return script
    return dataclasses.replace(script, views={**script.views, **ctes},
                               tables={k: t for k, t in script.tables.items() if k not in ctes})


def clause_text(clause: str, node: exp.Expr, statement) -> str:
    """A clause as the user wrote it, with its keyword (the tree keeps no position of WHERE, JOIN, ...)."""
    if clause == "joins":
        kind = " ".join(str(node.args.get(k) or "").upper() for k in ("side", "kind") if node.args.get(k))
        return f"{kind + ' ' if kind else ''}JOIN {user_text(node.this, statement)}"
    if clause == "distinct":
        return "SELECT DISTINCT"
    body = node.this if clause in ("where", "having") else node
    keyword = {"where": "WHERE", "having": "HAVING", "group": "GROUP BY"}[clause]
    if clause == "group":
        return f"GROUP BY {', '.join(user_text(g, statement) for g in node.expressions)}"
    return f"{keyword} {user_text(body, statement)}"


def _unparsed_hint(script: Script) -> str:
    if not script.unparsed:
        return ""
    line, words, why = script.unparsed[0]
    return f" (line {line}, {words} ..., could not be parsed: {why})"


def table_column(source: Source, column: exp.Column | str, construct: str, line: int) -> str:
    """The table column a visible column is; refused if a view computes it or it does not exist."""
    name = column if isinstance(column, str) else column.name
    value = source.columns.get(name.lower())
    if value is None:
        raise FlinkSettingsError(construct, f"{name} is not a column of {source.describe()}", line)
    if not isinstance(value, str):
        expr, _, view = value
        raise FlinkSettingsError(construct, f"{name} is computed by view {view.name} (line {view.line}) as "
                                 f"{user_text(expr, view.statement)}: the replay reads the table's own columns",
                                 line)
    return value
