"""A Flink SQL script read into what a replay needs: settings, tables with their watermarks, windowing queries.

`read_script` splits the script with the Flink dialect's tokenizer (dialect.py) and keeps:

- `SET 'key' = 'value'` / `RESET ['key']`, in order (read from the tokens: Flink's keys are not SQL names);
- every `CREATE [TEMPORARY] TABLE`: its columns, `WATERMARK FOR col AS expr` and `WITH (...)` options;
- every window: a call inside `FROM TABLE(...)` (the window TVFs TUMBLE, HOP, SESSION, CUMULATE, or any other
  table function, refused later by name) and the legacy `GROUP BY TUMBLE(col, INTERVAL ...)` group windows.

Other statements (USE, CREATE CATALOG/FUNCTION, ADD JAR, SHOW, EXPLAIN, ...) are skipped unparsed. A CREATE TABLE
or query that does not parse is kept as an error and raised only if the replay needs it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from .dialect import FlinkSQL, ParseError, Statement, TokenError, split_statements
from .settings import FlinkSettingsError

LEGACY_GROUP_WINDOWS = {"TUMBLE", "HOP", "SESSION"}
WINDOW_COLUMNS = {"window_start", "window_end", "window_time"}


@dataclass
class Table:
    name: str
    line: int
    columns: dict[str, exp.ColumnDef]  # lower-case name -> definition
    options: dict[str, str]
    watermark: exp.WatermarkColumnConstraint | None


@dataclass
class Window:
    call: exp.Func  # the TVF call (or the legacy group-window call)
    select: exp.Select | None  # the query it windows
    line: int
    legacy: bool = False

    @property
    def name(self) -> str:
        return call_name(self.call)


@dataclass
class Script:
    settings: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (value, line of the SET)
    tables: dict[str, Table] = field(default_factory=dict)  # lower-case last name part -> table
    windows: list[Window] = field(default_factory=list)
    unparsed: list[tuple[int, str, str]] = field(default_factory=list)  # (line, first words, parser's message)


def line_of(node: exp.Expr, default: int) -> int:
    """The script line of a node: its own position, else its first positioned descendant's."""
    for n in node.walk():
        if n.meta.get("line"):
            return n.meta["line"]
    return default


def call_name(call: exp.Func) -> str:
    return (call.name if isinstance(call, exp.Anonymous) else call.sql_name()).upper()


def read_script(sql: str) -> Script:
    try:
        statements = split_statements(sql)
    except TokenError as exc:
        raise FlinkSettingsError("SQL script", f"cannot be tokenized: {exc}") from None
    script = Script()
    for st in statements:
        words = st.words
        if words[0] == "SET" and len(st.tokens) > 1:
            _read_set(st, script)
        elif words[0] == "RESET":
            _read_reset(st, script)
        elif words[0] == "CREATE" and "TABLE" in words[1:3]:
            tree = _parse(st, script)
            if isinstance(tree, exp.Create) and isinstance(tree.this, exp.Schema):
                table = _table(tree, st.line)
                script.tables[table.name.lower()] = table
        elif words[0] in ("SELECT", "INSERT", "WITH", "(") or words[:2] in (("CREATE", "VIEW"),
                                                                              ("CREATE", "TEMPORARY")):
            tree = _parse(st, script)
            if tree is not None:
                script.windows += _windows(tree, st.line)
    return script


def _parse(st: Statement, script: Script) -> exp.Expr | None:
    try:
        return st.parse()
    except (ParseError, TokenError) as exc:
        script.unparsed.append((st.line, " ".join(t.text for t in st.tokens[:3]), str(exc).splitlines()[0]))
        return None


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'`":
        return text[1:-1].replace(text[0] * 2, text[0])
    return text


def _read_set(st: Statement, script: Script) -> None:
    """`SET 'key' = 'value'` (or the unquoted `SET key = value` of older SQL clients): the text around `=`."""
    eq = next((i for i, t in enumerate(st.tokens) if t.text == "="), None)
    if eq is None or eq == 1 or eq == len(st.tokens) - 1:
        raise FlinkSettingsError(st.text, "a SET statement is `SET 'key' = 'value'`", st.line)
    key = _unquote(st.sql[st.tokens[1].start:st.tokens[eq - 1].end + 1])
    value = st.sql[st.tokens[eq + 1].start:st.tokens[-1].end + 1]
    # A quoted value's token text is already unquoted by the tokenizer; the raw slice keeps `'5 s'` whole.
    script.settings[key] = (_unquote(value), st.line)


def _read_reset(st: Statement, script: Script) -> None:
    if len(st.tokens) == 1:
        script.settings.clear()
    else:
        script.settings.pop(_unquote(st.sql[st.tokens[1].start:st.tokens[-1].end + 1]), None)


def _table(tree: exp.Create, line: int) -> Table:
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
    return Table(name=name, line=line, columns=columns, options=options, watermark=watermark)


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
