"""A Flink SQL `WHERE` as the replay's `filter`: the Spark SQL boolean that keeps exactly the rows Flink keeps.

In Flink SQL the watermark is assigned where the table is scanned (its `WATERMARK FOR`), so a `WHERE` in the
windowing query or in a view it reads drops rows after they have driven the watermark: that is the replay's
`filter` (docs/semantics.md, "Row filter"). Both evaluate SQL's three-valued logic and keep only rows whose
predicate is true, so each construct is written as the Spark expression with Flink's value, or refused by name:

- AND, OR, NOT, parentheses; `= <> != < <= > >=` and `BETWEEN` between two numbers (an integer type, DOUBLE or
  DECIMAL: compared by value in both) or two strings (by their UTF-8 bytes in both) or two booleans;
- `IS [NOT] NULL`, `IS [NOT] TRUE/FALSE` of a boolean, `[NOT] IN (constants)` of one kind, `[NOT] LIKE 'pattern'`
  without ESCAPE; string constants without a backslash (Spark reads one as an escape, Flink as itself);
- operands: columns (computed ones and view expressions as typed.py maps them), constants, and the arithmetic, CAST
  and ROUND typed.py maps. FLOAT (single precision in Flink), timestamps, dates and other functions are refused.
"""
from __future__ import annotations

from typing import Callable

from sqlglot import exp

from .settings import FlinkSettingsError
from .typed import INTEGRAL, ColumnResolver, FType, Spark, Translator

_NUMBERS = INTEGRAL + ("DOUBLE", "DECIMAL")
_COMPARISONS = {exp.EQ: "=", exp.NEQ: "<>", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}
_BOOLEAN = FType("BOOLEAN")
_STRING = FType("STRING")


class PredicateTranslator:
    """Translates one WHERE clause. `text(node)` renders a node as the user wrote it; `line` is the clause's line."""

    def __init__(self, column: ColumnResolver, text: Callable[[exp.Expr], str], line: int):
        self.column, self.text, self.line = column, text, line
        self.operands = Translator(column, text, line)

    def refuse(self, node: exp.Expr, why: str):
        raise FlinkSettingsError(self.text(node), why, self.line)

    def predicate(self, node: exp.Expr) -> str:
        """The Spark SQL boolean of a Flink boolean expression."""
        # Parentheses as the user wrote them, and around AND/OR operands: comparisons, IS, IN, LIKE and BETWEEN bind
        # tighter than NOT, AND and OR in both dialects.
        if isinstance(node, exp.Paren):
            return f"({self.predicate(node.this)})"
        if isinstance(node, (exp.And, exp.Or)):
            op = "AND" if isinstance(node, exp.And) else "OR"
            sides = [self.predicate(n) if not isinstance(n, (exp.And, exp.Or)) or type(n) is type(node)
                     else f"({self.predicate(n)})" for n in (node.this, node.expression)]
            return f"{sides[0]} {op} {sides[1]}"
        if isinstance(node, exp.Not) and isinstance(node.this, exp.Is) and isinstance(node.this.expression, exp.Null):
            return f"{self.operand(node.this.this).sql} IS NOT NULL"
        if isinstance(node, exp.Not):
            inner = self.predicate(node.this)
            return f"NOT ({inner})" if isinstance(node.this, (exp.And, exp.Or)) else f"NOT {inner}"
        if type(node) in _COMPARISONS:
            a, b = self._comparable(node, node.this, node.expression)
            return f"{a} {_COMPARISONS[type(node)]} {b}"
        if isinstance(node, exp.Between):
            low, high = node.args["low"], node.args["high"]
            v, lo = self._comparable(node, node.this, low)
            _, hi = self._comparable(node, node.this, high)
            return f"{v} {'NOT ' if node.args.get('negate') else ''}BETWEEN {lo} AND {hi}"
        if isinstance(node, exp.Is):
            return self._is(node)
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Like):
            return self._like(node)
        if isinstance(node, exp.Escape) and isinstance(node.this, exp.Like):  # sqlglot wraps LIKE in its ESCAPE
            self.refuse(node, "LIKE ... ESCAPE: not mapped")
        operand = self.operand(node)
        if operand.type.kind != "BOOLEAN":
            self.refuse(node, f"a {operand.type}, not a condition")
        return operand.sql

    # -- operands ------------------------------------------------------------------------------------------

    def operand(self, node: exp.Expr) -> Spark:
        """A value in a condition: a constant, or what typed.py maps over columns."""
        if isinstance(node, exp.Literal) and node.is_string:
            return Spark(spark_string(node, self), _STRING)
        if isinstance(node, exp.Boolean):
            return Spark("true" if node.this else "false", _BOOLEAN)
        if isinstance(node, exp.Null):
            self.refuse(node, "a comparison with NULL is never true (write IS NULL)")
        out = self.operands.expr(node, in_aggregate=True)
        if out.type.kind in ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE"):
            self.refuse(node, f"a {out.type} in a condition: not mapped (time zones and precisions differ)")
        if out.type.kind not in _NUMBERS + ("STRING", "BOOLEAN"):
            self.refuse(node, f"a {out.type} in a condition: not mapped")
        return out

    def _comparable(self, node: exp.Expr, left: exp.Expr, right: exp.Expr) -> tuple[str, str]:
        a, b = self.operand(left), self.operand(right)
        if _kind(a.type) != _kind(b.type):
            self.refuse(node, f"compares a {a.type} with a {b.type}: Flink's implicit cast is not mapped (CAST one "
                              "side)")
        return a.sql, b.sql

    def _is(self, node: exp.Is) -> str:
        target = node.expression
        if isinstance(target, exp.Null):
            return f"{self.operand(node.this).sql} IS NULL"
        if isinstance(target, exp.Boolean):
            value = self.operand(node.this)
            if value.type.kind != "BOOLEAN":
                self.refuse(node, f"IS TRUE/FALSE of a {value.type}")
            return f"{value.sql} IS {'TRUE' if target.this else 'FALSE'}"
        self.refuse(node, "IS of something else than NULL, TRUE or FALSE: not mapped")

    def _in(self, node: exp.In) -> str:
        if node.args.get("query") is not None or not node.expressions:
            self.refuse(node, "IN of a subquery: not mapped (the replay windows one table)")
        value = self.operand(node.this)
        items = []
        for item in node.expressions:
            if not isinstance(item, (exp.Literal, exp.Boolean, exp.Neg)):
                self.refuse(item, "IN lists constants only: not mapped")
            out = self.operand(item)
            if _kind(out.type) != _kind(value.type):
                self.refuse(node, f"IN mixes a {value.type} with a {out.type}: not mapped")
            items.append(out.sql)
        return f"{value.sql} {'NOT ' if node.args.get('negate') else ''}IN ({', '.join(items)})"

    def _like(self, node: exp.Like) -> str:
        value, pattern = self.operand(node.this), node.expression
        if value.type.kind != "STRING" or not (isinstance(pattern, exp.Literal) and pattern.is_string):
            self.refuse(node, "LIKE of a string column with a constant pattern only: not mapped")
        negated = "NOT " if node.args.get("negate") else ""
        return f"{value.sql} {negated}LIKE {spark_string(pattern, self)}"


def _kind(t: FType) -> str:
    """What a value compares as: a number, a string or a boolean."""
    return "number" if t.kind in _NUMBERS else t.kind


def spark_string(node: exp.Literal, translator: PredicateTranslator) -> str:
    """A Flink string constant as a Spark SQL one. Flink reads a backslash as itself (a quote is doubled), Spark as
    an escape, and a LIKE pattern's backslash escapes again: a constant written with one is refused."""
    if "\\" in translator.text(node) or any(ord(ch) < 32 for ch in node.this):
        translator.refuse(node, "a backslash or control character in a string constant: Flink and Spark read it "
                                "differently: not mapped")
    return "'" + node.this.replace("'", "\\'") + "'"
