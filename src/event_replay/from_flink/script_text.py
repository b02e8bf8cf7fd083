"""Where a node of a Flink SQL script stands and how the user wrote it: its line (`line_of`), a call's name
(`call_name`) and its own text (`user_text`: the script's characters, whitespace folded, not sqlglot's
re-rendering), so that every refusal quotes the script as written. The keywords the parse tree keeps no position of
(CAST(, INTERVAL, DISTINCT, IS NULL, CASE ... END, a call's parentheses) are put back from the statement's tokens.
"""
from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.tokens import TokenType

from .dialect import FlinkSQL, Statement


def line_of(node: exp.Expr, default: int) -> int:
    """The script line of a node: its own position, else its first positioned descendant's."""
    for n in node.walk():
        if n.meta.get("line"):
            return n.meta["line"]
    return default


def call_name(call: exp.Func) -> str:
    return (call.name if isinstance(call, exp.Anonymous) else call.sql_name()).upper()


def user_text(node: exp.Expr, statement: Statement | None, limit: int = 90) -> str:
    """The node as the user wrote it (the script's own text, whitespace folded), not sqlglot's re-rendering; the
    re-rendering only when the node has no position."""
    text = _source_span(node, statement) if statement is not None else None
    if text is None:
        # Keywords the tree keeps no position of, as Flink SQL writes them (sqlglot adds parentheses).
        text = {exp.CurrentTimestamp: "CURRENT_TIMESTAMP", exp.CurrentDate: "CURRENT_DATE",
                exp.CurrentTime: "CURRENT_TIME"}.get(type(node)) or node.sql(FlinkSQL)
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def _source_span(node: exp.Expr, st: Statement) -> str | None:
    starts = [n.meta["start"] for n in node.walk() if "start" in n.meta]
    ends = [n.meta["end"] for n in node.walk() if "end" in n.meta]
    if not starts:
        return None
    toks = st.tokens
    i = next((k for k, t in enumerate(toks) if t.start == min(starts)), None)
    j = next((k for k, t in enumerate(toks) if t.end == max(ends)), None)
    if i is None or j is None:
        return None
    # Leading keywords the tree keeps no position of: CAST( / TRY_CAST(, INTERVAL, DISTINCT, '(' of a Paren.
    for n in _path_down(node, min(starts)):
        if isinstance(n, (exp.Cast, exp.TryCast)) and i >= 2 and toks[i - 1].token_type == TokenType.L_PAREN:
            i -= 2
        elif isinstance(n, exp.Cast) and i >= 1 and toks[i - 1].text.upper() in ("TIME", "DATE", "TIMESTAMP"):
            i -= 1  # TIME '00:10:00' (a typed literal)
        elif isinstance(n, exp.Interval) and i >= 1 and toks[i - 1].text.upper() == "INTERVAL":
            i -= 1
        elif isinstance(n, exp.Distinct) and i >= 1 and toks[i - 1].text.upper() == "DISTINCT":
            i -= 1
        elif isinstance(n, exp.Paren) and i >= 1 and toks[i - 1].token_type == TokenType.L_PAREN:
            i -= 1
        elif isinstance(n, exp.Neg) and i >= 1 and toks[i - 1].text == "-":
            i -= 1
    # Trailing keywords the tree keeps no position of: IS [NOT] NULL / TRUE / FALSE.
    if any(isinstance(n, exp.Is) for n in node.walk()):
        while j + 1 < len(toks) and toks[j + 1].text.upper() in ("IS", "NOT", "NULL", "TRUE", "FALSE"):
            j += 1
    # CASE ... END: the keywords around the branches.
    if any(isinstance(n, exp.Case) for n in _path_down(node, min(starts))):
        while i > 0 and toks[i].text.upper() != "CASE":
            i -= 1
    cases = sum(1 for t in toks[i:j + 1] if t.text.upper() == "CASE")
    ends = sum(1 for t in toks[i:j + 1] if t.text.upper() == "END")
    while cases > ends and j + 1 < len(toks):
        j += 1
        ends += toks[j].text.upper() == "END"
    # Trailing words: an interval's unit (when its number ends the span), the closing parentheses of calls and casts.
    for iv in node.find_all(exp.Interval):
        lit = iv.this
        if isinstance(lit, exp.Literal) and lit.meta.get("end") == toks[j].end and j + 1 < len(toks):
            j = min(len(toks) - 1, j + (3 if isinstance(iv.args.get("unit"), exp.IntervalSpan) else 1))
    while j + 1 < len(toks) and toks[j + 1].token_type == TokenType.L_PAREN and toks[j].token_type not in (
            TokenType.R_PAREN, TokenType.L_PAREN) and toks[j].start >= toks[i].start:
        j += 1  # a call's name ends the span: its parentheses belong to it (balanced below)
        break
    depth = sum(1 if t.token_type == TokenType.L_PAREN else -1 if t.token_type == TokenType.R_PAREN else 0
                for t in toks[i:j + 1])
    while depth > 0 and j + 1 < len(toks):
        j += 1
        depth += 1 if toks[j].token_type == TokenType.L_PAREN else -1 if toks[j].token_type == TokenType.R_PAREN \
            else 0
    j = min(j, len(toks) - 1)
    return st.sql[toks[i].start:toks[j].end + 1]


def _path_down(node: exp.Expr, start: int) -> list[exp.Expr]:
    """The nodes from the leaf at `start` up to `node`, innermost first (their keywords precede the leaf)."""
    leaf = next((n for n in node.walk() if n.meta.get("start") == start), None)
    path = []
    while leaf is not None:
        path.append(leaf)
        if leaf is node:
            break
        leaf = leaf.parent
    return path
