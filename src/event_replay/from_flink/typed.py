"""The SELECT list of a window aggregation as Spark SQL aggregates that compute what Flink computes, types included.

The replay evaluates each `aggregations.<name>` as a Spark SQL aggregate expression over a window's rows. Flink and
Spark differ in result types and in some arithmetic, so each Flink construct is written as the Spark expression that
gives Flink's value and Flink's type (checked against Flink 2.3 itself: docs/flink_settings.md, "Result types"), or
refused by name:

- `COUNT(*)`, `COUNT(1)`, `COUNT(x)`, `COUNT(DISTINCT x)` -> BIGINT, as in Spark;
- `SUM(x)`: TINYINT/SMALLINT/INT/BIGINT -> the same type (`cast(sum(x) as int)`), DOUBLE -> DOUBLE,
  DECIMAL(p, s) -> DECIMAL(38, s); FLOAT refused (Flink adds in single precision);
- `AVG(x)`: an integer type -> the same type, Flink's sum / count truncated toward zero
  (`cast(sum(cast(x as bigint)) div count(x) as int)`), DOUBLE -> DOUBLE; DECIMAL refused (Flink's quotient scale
  and rounding are not reproduced), FLOAT refused;
- `MIN(x)`, `MAX(x)`: the type of x (strings compare by their UTF-8 bytes in both);
- over them: `+ - *` of integers (the wider type) or with a DOUBLE (DOUBLE), `/` of integers (Flink's integer
  division: `div`) or with a DOUBLE, `CAST(e AS <integer type> | DOUBLE | FLOAT | DECIMAL(p, s))` (HALF_UP in both),
  `ROUND(e [, n])` with n >= 0 (HALF_UP of the decimal text in both; a DECIMAL gets Flink's result type);
  DECIMAL arithmetic, casts to strings and other functions are refused;
- `agg(...) FILTER (WHERE cond)` of those aggregates: the same aggregate over the rows where cond is true, the
  condition as predicate.py maps a WHERE (`count(*) FILTER (WHERE status = '403')`, inside any cast).

Overflow: Flink wraps integers around (and gives NULL for a DECIMAL cast that does not fit); the replay's Spark runs
with ANSI arithmetic and stops with an error instead, so an overflow is never a silently different number.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from sqlglot import exp

from .settings import FlinkSettingsError

INTEGRAL = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_DTYPES = {
    exp.DataType.Type.TINYINT: "TINYINT", exp.DataType.Type.SMALLINT: "SMALLINT", exp.DataType.Type.INT: "INT",
    exp.DataType.Type.BIGINT: "BIGINT", exp.DataType.Type.FLOAT: "FLOAT", exp.DataType.Type.DOUBLE: "DOUBLE",
    exp.DataType.Type.DECIMAL: "DECIMAL", exp.DataType.Type.TEXT: "STRING", exp.DataType.Type.VARCHAR: "STRING",
    exp.DataType.Type.CHAR: "STRING", exp.DataType.Type.BOOLEAN: "BOOLEAN", exp.DataType.Type.TIMESTAMP: "TIMESTAMP",
    exp.DataType.Type.TIMESTAMPLTZ: "TIMESTAMP_LTZ", exp.DataType.Type.DATE: "DATE",
}


@dataclass(frozen=True)
class FType:
    """A Flink SQL type, as far as the result types of aggregates need it."""
    kind: str  # TINYINT ... BIGINT, FLOAT, DOUBLE, DECIMAL, STRING, BOOLEAN, TIMESTAMP, TIMESTAMP_LTZ, DATE, or OTHER
    precision: int | None = None
    scale: int | None = None
    text: str = ""  # the type as written, for OTHER

    def __str__(self) -> str:
        if self.kind == "DECIMAL":
            return f"DECIMAL({self.precision}, {self.scale})"
        if self.kind in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            return f"{self.kind}({self.precision})"
        return self.text or self.kind

    @property
    def integral(self) -> bool:
        return self.kind in INTEGRAL

    @property
    def spark(self) -> str:
        """The Spark SQL name of the type (for a cast)."""
        return f"decimal({self.precision},{self.scale})" if self.kind == "DECIMAL" else self.kind.lower()


def ftype(dt: exp.DataType | None) -> FType:
    """The Flink type of a DDL column or CAST target (Flink's defaults: DECIMAL = DECIMAL(10, 0), TIMESTAMP =
    TIMESTAMP(6))."""
    if dt is None:
        return FType("OTHER", text="a type the DDL does not give")
    kind = _DTYPES.get(dt.this)
    params = [int(p.this.name) for p in dt.expressions if isinstance(p, exp.DataTypeParam)
              and isinstance(p.this, exp.Literal) and p.this.name.isdigit()]
    if kind == "DECIMAL":
        return FType("DECIMAL", params[0] if params else 10, params[1] if len(params) > 1 else 0)
    if kind in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return FType(kind, params[0] if params else 6)
    if kind is None:
        return FType("OTHER", text=dt.sql().upper())
    return FType(kind)


DOUBLE, BIGINT = FType("DOUBLE"), FType("BIGINT")


@dataclass(frozen=True)
class Spark:
    """A Spark SQL expression, the Flink type of its value, and whether it holds an aggregate."""
    sql: str
    type: FType
    aggregate: bool = False
    why: str = ""  # how it follows Flink, for the YAML comment


# (Spark SQL column, its Flink type) of a column name the aggregate reads; raises if it cannot be read.
ColumnResolver = Callable[[exp.Column], tuple[str, FType]]


class Translator:
    """Translates one SELECT item. `text(node)` renders a node as the user wrote it, `line` is the item's line."""

    def __init__(self, column: ColumnResolver, text: Callable[[exp.Expr], str], line: int):
        self.column, self.text, self.line = column, text, line

    def refuse(self, node: exp.Expr, why: str):
        raise FlinkSettingsError(self.text(node), why, self.line)

    def item(self, node: exp.Expr) -> Spark:
        out = self.expr(node, in_aggregate=False)
        if not out.aggregate:
            self.refuse(node, "not an aggregate of the window: the replay's output holds the key, window_start, "
                              "window_end and aggregates")
        return out

    def expr(self, node: exp.Expr, in_aggregate: bool) -> Spark:
        if isinstance(node, exp.Paren):
            inner = self.expr(node.this, in_aggregate)
            return Spark(f"({inner.sql})", inner.type, inner.aggregate, inner.why)
        if isinstance(node, exp.Column):
            if not in_aggregate:
                self.refuse(node, "a column outside an aggregate (only the GROUP BY key and the window columns "
                                  "may stand alone): not mapped")
            sql, t = self.column(node)
            return Spark(sql, t)
        if isinstance(node, exp.Literal):
            return self._literal(node)
        if isinstance(node, exp.Neg):
            inner = self.expr(node.this, in_aggregate)
            self._numeric(node, inner.type)
            return Spark(f"(- {inner.sql})", inner.type, inner.aggregate, inner.why)
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
            return self._arithmetic(node, in_aggregate)
        if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast):
            return self._cast(node, in_aggregate)
        if isinstance(node, exp.Round):
            return self._round(node, in_aggregate)
        if isinstance(node, (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)):
            if in_aggregate:
                self.refuse(node, "an aggregate inside an aggregate: not valid Flink SQL")
            return self._aggregate(node)
        if isinstance(node, exp.Filter):
            if in_aggregate or not isinstance(node.this, (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)):
                self.refuse(node, "FILTER (WHERE ...) of something else than COUNT, SUM, AVG, MIN or MAX: not mapped")
            return self._aggregate(node.this, self._row_condition(node.expression.this))
        if isinstance(node, exp.Window):
            self.refuse(node, "an OVER aggregation inside a window aggregation: not mapped")
        what = "function" if isinstance(node, exp.Func) else "expression"
        self.refuse(node, f"a {what} not mapped (mapped: COUNT, SUM, AVG, MIN, MAX, and over them + - * /, CAST "
                          "to a number, ROUND)")

    # -- leaves --------------------------------------------------------------------------------------------

    def _literal(self, node: exp.Literal) -> Spark:
        if node.is_string:
            self.refuse(node, "a string constant in an aggregate expression: not mapped")
        text = node.name
        if re.fullmatch(r"\d+", text):
            n = int(text)
            return Spark(text, FType("INT") if n <= 2**31 - 1 else BIGINT)
        if re.fullmatch(r"\d*\.\d*", text):
            digits = text.replace(".", "").lstrip("0") or "0"
            scale = len(text.split(".")[1])
            return Spark(text, FType("DECIMAL", max(len(digits), scale), scale))
        if re.fullmatch(r"[\d.]+[eE][+-]?\d+", text):
            return Spark(f"cast({text} as double)", DOUBLE)
        self.refuse(node, "a constant the converter does not map")

    def _numeric(self, node: exp.Expr, t: FType) -> None:
        if t.kind not in INTEGRAL + ("DOUBLE", "DECIMAL"):
            extra = " (Flink computes FLOAT in single precision)" if t.kind == "FLOAT" else ""
            self.refuse(node, f"arithmetic on a {t}: not mapped{extra}")

    # -- operators -----------------------------------------------------------------------------------------

    def _arithmetic(self, node: exp.Binary, in_aggregate: bool) -> Spark:
        a, b = self.expr(node.this, in_aggregate), self.expr(node.expression, in_aggregate)
        for side in (a, b):
            self._numeric(node, side.type)
        op = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/"}[type(node)]
        agg = a.aggregate or b.aggregate
        why = "; ".join(w for w in (a.why, b.why) if w)
        if a.type.integral and b.type.integral:
            t = max(a.type, b.type, key=lambda x: INTEGRAL.index(x.kind))
            if op == "/":
                sql = f"({a.sql} div {b.sql})"  # Flink divides integers as integers, truncating toward zero
                sql = sql if t.kind == "BIGINT" else f"cast({sql} as {t.spark})"
                why = "; ".join(x for x in (why, f"{t} / {t}: Flink's integer division") if x)
                return Spark(sql, t, agg, why)
            return Spark(f"({a.sql} {op} {b.sql})", t, agg, why)
        if "DOUBLE" in (a.type.kind, b.type.kind):
            return Spark(f"({a.sql} {op} {b.sql})", DOUBLE, agg, why)
        self.refuse(node, f"arithmetic of {a.type} and {b.type}: Flink's DECIMAL result precision and rounding are "
                          "not reproduced (CAST an operand to DOUBLE, or the result to DECIMAL(p, s) only)")

    def _cast(self, node: exp.Cast, in_aggregate: bool) -> Spark:
        inner = self.expr(node.this, in_aggregate)
        target = ftype(node.args.get("to"))
        if target.kind not in INTEGRAL + ("DOUBLE", "FLOAT", "DECIMAL"):
            why = " (Flink's and Spark's text of a number differ)" if target.kind == "STRING" else ""
            self.refuse(node, f"CAST to {target}: not mapped{why}")
        if inner.type.kind not in INTEGRAL + ("DOUBLE", "FLOAT", "DECIMAL"):
            self.refuse(node, f"CAST of a {inner.type}: not mapped")
        why = "; ".join(w for w in (inner.why, f"CAST to {target}") if w)
        return Spark(f"cast({inner.sql} as {target.spark})", target, inner.aggregate, why)

    def _round(self, node: exp.Round, in_aggregate: bool) -> Spark:
        inner = self.expr(node.this, in_aggregate)
        digits = node.args.get("decimals")
        n = 0
        if digits is not None:
            if not (isinstance(digits, exp.Literal) and not digits.is_string and digits.name.isdigit()):
                self.refuse(node, "ROUND to a number of digits that is not a constant >= 0: not mapped")
            n = int(digits.name)
        t = inner.type
        if t.kind == "DOUBLE" or t.integral:
            return Spark(f"round({inner.sql}, {n})", t, inner.aggregate, inner.why)
        if t.kind == "DECIMAL":
            # Flink: ROUND(DECIMAL(p, s), n) is DECIMAL(p, s) when n >= s, else DECIMAL(min(38, p - s + n + 1), n).
            rt = t if n >= t.scale else FType("DECIMAL", min(38, t.precision - t.scale + n + 1), n)
            return Spark(f"cast(round({inner.sql}, {n}) as {rt.spark})", rt, inner.aggregate, inner.why)
        self.refuse(node, f"ROUND of a {t}: not mapped")

    # -- aggregates ----------------------------------------------------------------------------------------

    def _argument(self, node: exp.AggFunc, arg: exp.Expr) -> Spark:
        """The aggregate's argument; a refusal of a bare column argument names the whole aggregate."""
        try:
            return self.expr(arg, in_aggregate=True)
        except FlinkSettingsError as e:
            if isinstance(arg, exp.Column) and e.construct in (arg.name, self.text(arg)):
                raise FlinkSettingsError(self.text(node), e.why, e.line) from None
            raise

    def _row_condition(self, node: exp.Expr) -> str:
        """A FILTER's condition as the Spark SQL boolean (predicate.py, which builds on this module: imported here)."""
        from .predicate import PredicateTranslator  # lazy: predicate.py builds on this module (a cycle at import)
        return PredicateTranslator(self.column, self.text, self.line).predicate(node)

    def _aggregate(self, node: exp.AggFunc, condition: str | None = None) -> Spark:
        """The aggregate's Spark SQL; `condition`: its FILTER (WHERE ...), after every aggregate call it becomes."""
        f = f" FILTER (WHERE {condition})" if condition else ""
        fn = type(node).__name__.upper()
        arg = node.this
        distinct = isinstance(arg, exp.Distinct)
        if distinct:
            if len(arg.expressions) != 1:
                self.refuse(node, f"{fn}(DISTINCT ...) of several columns: not mapped")
            arg = arg.expressions[0]
        if node.expressions:
            self.refuse(node, f"{fn} of several arguments: not mapped")
        d = "DISTINCT " if distinct else ""
        if fn == "COUNT":
            if isinstance(arg, exp.Star) or (isinstance(arg, exp.Literal) and not distinct):
                return Spark(f"count(*){f}", BIGINT, True)
            x = self._argument(node, arg)
            return Spark(f"count({d}{x.sql}){f}", BIGINT, True)
        if isinstance(arg, exp.Star):
            self.refuse(node, f"{fn}(*): not valid Flink SQL")
        x = self._argument(node, arg)
        t = x.type
        if fn in ("MIN", "MAX"):
            if t.kind == "OTHER":
                self.refuse(node, f"{fn} of a column of type {t}: not mapped")
            return Spark(f"{fn.lower()}({d}{x.sql}){f}", t, True, x.why)
        if t.kind == "FLOAT":
            self.refuse(node, f"{fn} of a FLOAT: Flink adds in single precision, the replay would not: not mapped")
        if fn == "SUM":
            if t.kind in ("DOUBLE", "BIGINT"):
                return Spark(f"sum({d}{x.sql}){f}", t, True, x.why)
            if t.integral:
                return Spark(f"cast(sum({d}{x.sql}){f} as {t.spark})", t, True,
                             "; ".join(w for w in (x.why, f"SUM of {t} is {t} in Flink") if w))
            if t.kind == "DECIMAL":
                rt = FType("DECIMAL", 38, t.scale)
                return Spark(f"cast(sum({d}{x.sql}){f} as {rt.spark})", rt, True,
                             "; ".join(w for w in (x.why, f"SUM of {t} is {rt} in Flink") if w))
            self.refuse(node, f"SUM of a {t}: not mapped")
        # AVG
        if t.kind == "DOUBLE":
            return Spark(f"avg({d}{x.sql}){f}", t, True, x.why)
        if t.integral:
            total = f"sum({d}{x.sql}){f}" if t.kind == "BIGINT" else f"sum({d}cast({x.sql} as bigint)){f}"
            sql = f"{total} div count({d}{x.sql}){f}"
            sql = f"({sql})" if t.kind == "BIGINT" else f"cast({sql} as {t.spark})"
            return Spark(sql, t, True, "; ".join(w for w in (x.why, f"AVG of {t} is {t} in Flink: the BIGINT sum / "
                                                                    "count, truncated toward zero") if w))
        if t.kind == "DECIMAL":
            self.refuse(node, f"AVG of a {t}: Flink's DECIMAL(38, {max(6, t.scale)}) quotient and its rounding are "
                              "not reproduced: not mapped (AVG(CAST(x AS DOUBLE)) maps)")
        self.refuse(node, f"AVG of a {t}: not mapped")
