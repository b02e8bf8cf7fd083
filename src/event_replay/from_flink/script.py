"""A Flink SQL script read into what a replay needs: settings, tables, views, windowing queries, in script order.

`read_script` splits the script with the Flink dialect's tokenizer (dialect.py) and keeps:

- `SET 'key' = 'value'` / `RESET ['key']`, in order: each windowing query keeps the settings in force where it is
  written (a SET after the query does not apply to it, as in the SQL client);
- every `CREATE [TEMPORARY] TABLE`: its columns (types, computed columns, metadata), `WATERMARK FOR col AS expr`
  and `WITH (...)` options;
- every `CREATE [TEMPORARY] VIEW` (followed when a window reads it);
- every window: a call inside `FROM TABLE(...)` (the window TVFs TUMBLE, HOP, SESSION, CUMULATE, or any other
  table function, refused later by name) and the legacy `GROUP BY TUMBLE|HOP|SESSION(col, INTERVAL ...)` group
  windows.

Other statements (USE, CREATE CATALOG/FUNCTION, ADD JAR, SHOW, EXPLAIN, ...) are skipped unparsed. A CREATE TABLE
or query that does not parse is kept as an error and raised only if the replay needs it. A statement that runs into
the next one (a missing `;`) is refused at once: the SQL client would not run the script either.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import TokenType

from .dialect import FlinkSQL, ParseError, Statement, TokenError, split_statements
from .script_text import call_name, line_of
from .settings import FlinkSettingsError

LEGACY_GROUP_WINDOWS = {"TUMBLE", "HOP", "SESSION"}
WINDOW_COLUMNS = {"window_start", "window_end", "window_time"}
# Keywords that start a statement: one of them first on its line inside a statement means a missing `;`.
_STATEMENT_STARTS = {"CREATE", "INSERT", "SET", "RESET", "EXECUTE", "DROP", "ALTER"}


@dataclass
class Table:
    name: str
    line: int
    columns: dict[str, exp.ColumnDef]  # lower-case name -> definition
    options: dict[str, str]
    watermark: exp.WatermarkColumnConstraint | None
    statement: Statement | None = None

    def computed(self, column: str) -> exp.Expr | None:
        """The expression of a computed column (`c AS expr`), else None."""
        col = self.columns.get(column.lower())
        for c in (col.args.get("constraints") or []) if col is not None else []:
            if isinstance(c.args.get("kind"), exp.ComputedColumnConstraint):
                return c.args["kind"].this
        return None

    def type_of(self, column: str) -> exp.DataType | None:
        col = self.columns.get(column.lower())
        kind = col.args.get("kind") if col is not None else None
        return kind if isinstance(kind, exp.DataType) else None


@dataclass
class View:
    name: str
    line: int
    select: exp.Select | None  # None: not a plain SELECT (UNION, ...)
    columns: list[str] | None  # `CREATE VIEW v (a, b) AS ...`
    statement: Statement
    kind: str = "view"  # or "CTE": a `WITH v AS (SELECT ...)` of the windowing query (query.py with_ctes)


@dataclass
class Window:
    call: exp.Func  # the TVF call (or the legacy group-window call)
    select: exp.Select | None  # the query it windows
    line: int
    legacy: bool = False
    statement: Statement | None = None
    settings: dict[str, tuple[str, int]] = field(default_factory=dict)  # the SETs in force where it is written

    @property
    def name(self) -> str:
        return call_name(self.call)


@dataclass
class Script:
    settings: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (value, line): at the script's end
    sets: list[tuple[str, str | None, int]] = field(default_factory=list)  # every SET/RESET: (key, value, line)
    tables: dict[str, Table] = field(default_factory=dict)  # lower-case last name part -> table
    views: dict[str, View] = field(default_factory=dict)
    windows: list[Window] = field(default_factory=list)
    queries: list[tuple[exp.Expr, Statement]] = field(default_factory=list)  # every query parsed, in order
    unparsed: list[tuple[int, str, str]] = field(default_factory=list)  # (line, first words, where it stopped)
    unparsed_tables: dict[str, tuple[int, str]] = field(default_factory=dict)  # name -> (line, where it stopped)


def read_script(sql: str) -> Script:
    try:
        statements = split_statements(sql)
    except TokenError as exc:
        raise FlinkSettingsError("SQL script", f"cannot be tokenized: {exc}") from None
    script = Script()
    for st in statements:
        _check_separator(st)
        words = st.words
        if words[0] == "SET" and len(st.tokens) > 1:
            _read_set(st, script)
        elif words[0] == "RESET":
            _read_reset(st, script)
        elif words[0] == "CREATE" and "TABLE" in words[1:3]:
            tree = _parse(st, script)
            if isinstance(tree, exp.Create) and isinstance(tree.this, exp.Schema):
                table = _table(tree, st)
                script.tables[table.name.lower()] = table
            elif tree is None:
                name = _created_name(st)
                if name:
                    script.unparsed_tables[name.lower()] = (st.line, script.unparsed[-1][2])
        elif words[0] in ("SELECT", "INSERT", "WITH", "(") or words[:2] in (("CREATE", "VIEW"),
                                                                              ("CREATE", "TEMPORARY")):
            tree = _parse(st, script)
            if tree is None:
                continue
            script.queries.append((tree, st))
            if isinstance(tree, exp.Create) and str(tree.args.get("kind", "")).upper() == "VIEW":
                view = _view(tree, st)
                script.views[view.name.lower()] = view
            for w in _windows(tree, st.line):
                w.statement, w.settings = st, dict(script.settings)
                script.windows.append(w)
    return script


_SET_OPERATORS = {"UNION", "ALL", "DISTINCT", "EXCEPT", "INTERSECT", "MINUS"}


def _check_separator(st: Statement) -> None:
    """A statement keyword first on its line inside a statement: the `;` before it is missing."""
    prev_line = st.tokens[0].line
    seen_select = st.words[0] == "SELECT"
    for k, t in enumerate(st.tokens[1:], 1):
        if t.token_type == TokenType.SELECT and not _inside_parens(st.tokens[:k]):
            before = st.tokens[k - 1].text.upper()
            first_on_line = t.line != prev_line
            lone = st.words[0] in ("CREATE", "SET", "RESET", "USE", "DROP", "ALTER") and before != "AS" \
                and "VIEW" not in st.words[:4]
            again = seen_select and before not in _SET_OPERATORS
            if first_on_line and (lone or again):
                first = " ".join(x.text for x in st.tokens[:3])
                raise FlinkSettingsError(f"{first} ...", f"runs into the next statement (SELECT on line {t.line}): "
                                         "a ';' is missing before it (Flink SQL statements end with ';')", st.line)
            seen_select = True
        if t.line != prev_line and t.text.upper() in _STATEMENT_STARTS \
                and t.token_type not in (TokenType.STRING, TokenType.IDENTIFIER) \
                and not _inside_parens(st.tokens[:k]) and not _wrapped_set(st.tokens, k) \
                and not (t.text.upper() == "SET" and st.words[0] == "UPDATE"):
            first = " ".join(x.text for x in st.tokens[:3])
            raise FlinkSettingsError(f"{first} ...", f"runs into the next statement ({t.text} on line {t.line}): "
                                     "a ';' is missing before it (Flink SQL statements end with ';')", st.line)
        prev_line = t.line


def _inside_parens(tokens) -> bool:
    depth = 0
    for t in tokens:
        depth += 1 if t.token_type == TokenType.L_PAREN else -1 if t.token_type == TokenType.R_PAREN else 0
    return depth > 0


def _wrapped_set(tokens, k: int) -> bool:
    """`EXECUTE STATEMENT SET` / `BEGIN STATEMENT SET` split over lines: the SET is part of the wrapper."""
    return tokens[k].text.upper() == "SET" and k >= 1 and tokens[k - 1].text.upper() == "STATEMENT"


def _parse(st: Statement, script: Script) -> exp.Expr | None:
    sqlglot_log = logging.getLogger("sqlglot")
    level = sqlglot_log.level
    sqlglot_log.setLevel(logging.CRITICAL)  # sqlglot's warnings (unsupported syntax ...) are not the user's
    try:
        return st.parse()
    except (ParseError, TokenError) as exc:
        script.unparsed.append((st.line, " ".join(t.text for t in st.tokens[:3]), _parse_problem(exc)))
        return None
    finally:
        sqlglot_log.setLevel(level)


def _created_name(st: Statement) -> str | None:
    """The last part of the name a CREATE [TEMPORARY] TABLE [IF NOT EXISTS] statement creates."""
    words = [t.text for t in st.tokens[:12]]
    upper = [w.upper() for w in words]
    if "TABLE" not in upper:
        return None
    k = upper.index("TABLE") + 1
    if upper[k:k + 3] == ["IF", "NOT", "EXISTS"]:
        k += 3
    while k + 2 < len(words) and words[k + 1] == ".":
        k += 2
    return words[k] if k < len(words) else None


def _parse_problem(exc: Exception) -> str:
    """Where the parser stopped, in the script's terms (not the parser's own wording)."""
    errors = getattr(exc, "errors", None) or []
    if errors and errors[0].get("line"):
        e = errors[0]
        near = (e.get("highlight") or "").strip()
        return f"not understood at line {e['line']}, column {e.get('col')}" + (f" ('{near}')" if near else "")
    return "not understood"


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'`\"":
        return text[1:-1].replace(text[0] * 2, text[0])
    return text


def _read_set(st: Statement, script: Script) -> None:
    """`SET 'key' = 'value'` (or the unquoted `SET key = value` of older SQL clients): the text around `=`."""
    eq = next((i for i, t in enumerate(st.tokens) if t.text == "="), None)
    if eq is None or eq == 1 or eq == len(st.tokens) - 1:
        raise FlinkSettingsError(re.sub(r"\s+", " ", st.text), "a SET statement is `SET 'key' = 'value'`", st.line)
    key = _unquote(st.sql[st.tokens[1].start:st.tokens[eq - 1].end + 1])
    value = st.sql[st.tokens[eq + 1].start:st.tokens[-1].end + 1]
    # A quoted value's token text is already unquoted by the tokenizer; the raw slice keeps `'5 s'` whole.
    script.settings[key] = (_unquote(value), st.line)
    script.sets.append((key, _unquote(value), st.line))


def _read_reset(st: Statement, script: Script) -> None:
    if len(st.tokens) == 1:
        script.settings.clear()
        script.sets.append(("*", None, st.line))
    else:
        key = _unquote(st.sql[st.tokens[1].start:st.tokens[-1].end + 1])
        script.settings.pop(key, None)
        script.sets.append((key, None, st.line))


def _table(tree: exp.Create, st: Statement) -> Table:
    schema = tree.this
    name = schema.this.name if isinstance(schema.this, exp.Table) else schema.this.sql(FlinkSQL)
    columns, watermark = {}, None
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            columns[item.name.lower()] = item
        elif isinstance(item, exp.WatermarkColumnConstraint):
            watermark = item
    options = {}
    props = tree.args.get("properties")
    for p in (props.expressions if props else []):
        if type(p) is exp.Property and isinstance(p.this, exp.Literal):  # not COMMENT, PARTITIONED BY, ...
            options[p.this.this] = p.args["value"].name if isinstance(p.args.get("value"), exp.Expr) else ""
    return Table(name=name, line=st.line, columns=columns, options=options, watermark=watermark, statement=st)


def _view(tree: exp.Create, st: Statement) -> View:
    target = tree.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = [c.name for c in target.expressions]
        target = target.this
    query = tree.expression
    return View(name=target.name, line=st.line, select=query if isinstance(query, exp.Select) else None,
                columns=columns, statement=st)


def _windows(tree: exp.Expr, line: int) -> list[Window]:
    """The windows of a query statement, in the order they are written."""
    found = []
    for node in tree.walk():
        if isinstance(node, exp.Anonymous) and node.name.upper() == "TABLE" and node.expressions \
                and isinstance(node.expressions[0], exp.Func) and isinstance(node.parent, exp.Table):
            call = node.expressions[0]
            found.append(Window(call=call, select=call.find_ancestor(exp.Select), line=line_of(call, line)))
        elif isinstance(node, exp.Group):
            for g in node.expressions:
                if isinstance(g, exp.Func) and call_name(g) in LEGACY_GROUP_WINDOWS:
                    found.append(Window(call=g, select=node.find_ancestor(exp.Select),
                                        line=line_of(g, line), legacy=True))
    return sorted(found, key=lambda w: (w.line, line_of(w.call, w.line)))
