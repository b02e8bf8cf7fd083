"""The Flink SQL that sqlglot does not know, as a small sqlglot dialect, and a script split into statements.

sqlglot has no Flink dialect. Flink SQL is Calcite SQL with backquoted identifiers, single-quoted strings and a
few constructs of its own; this dialect adds the ones a replay config is derived from, and nothing else:

- `WATERMARK FOR col AS expr` inside `CREATE TABLE (...)`: parsed as sqlglot's `WatermarkColumnConstraint`
  (the same node RisingWave's dialect uses for the same clause);
- `METADATA [FROM 'key'] [VIRTUAL]` after a column's type: parsed as a `MetadataColumnConstraint`;
- `TABLE name [PARTITION BY cols]` as an argument of a window table-valued function (TUMBLE, HOP, SESSION,
  CUMULATE), positional or named (`DATA => TABLE t`): parsed as a `Table` whose `partition_by` arg holds the
  columns.

Everything else (`DESCRIPTOR(col)`, `INTERVAL '10' MINUTES`, `SET 'k' = 'v'`, `WITH ('connector' = ...)`) is
sqlglot's own parsing. The script is split into statements by sqlglot's tokenizer (semicolons outside strings
and comments), each statement parsed from its own tokens, so every node and every parse error keeps the line of
the script it comes from.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.parser import Parser
from sqlglot.tokens import Token, Tokenizer, TokenType


class MetadataColumnConstraint(exp.Expression, exp.ColumnConstraintKind):
    """`METADATA [FROM 'key'] [VIRTUAL]`: a column read from the connector's metadata."""
    arg_types = {"this": False, "virtual": False}


class FlinkParser(Parser):
    CONSTRAINT_PARSERS = {
        **Parser.CONSTRAINT_PARSERS,
        "METADATA": lambda self: self.expression(
            MetadataColumnConstraint(this=self._match(TokenType.FROM) and self._parse_string(),
                                     virtual=self._match_text_seq("VIRTUAL"))
        ),
        "WATERMARK": lambda self: self.expression(
            exp.WatermarkColumnConstraint(
                this=self._match(TokenType.FOR) and self._parse_column(),
                expression=self._match(TokenType.ALIAS) and self._parse_disjunction(),
            )
        ),
    }
    SCHEMA_UNNAMED_CONSTRAINTS = {*Parser.SCHEMA_UNNAMED_CONSTRAINTS, "WATERMARK"}
    FUNC_TOKENS = {*Parser.FUNC_TOKENS, TokenType.SESSION}  # the SESSION window TVF
    LAMBDAS = {
        **Parser.LAMBDAS,
        # `DATA => TABLE t`: a named argument may be a table too.
        TokenType.FARROW: lambda self, expressions: self.expression(
            exp.Kwarg(this=exp.var(expressions[0].name),
                      expression=self._parse_table_argument() or self._parse_disjunction())
        ),
    }

    def _parse_types(self, *args, **kwargs):
        # `ROW<name TYPE, ...>` is Flink's struct type: read as sqlglot's STRUCT<...>.
        if self._curr and self._curr.token_type == TokenType.ROW and self._next \
                and self._next.token_type == TokenType.LT:
            self._curr.token_type = TokenType.STRUCT
        return super()._parse_types(*args, **kwargs)

    def _parse_lambda(self, alias: bool = False) -> exp.Expr | None:
        return self._parse_table_argument() or super()._parse_lambda(alias=alias)

    def _parse_table_argument(self) -> exp.Table | None:
        """`TABLE name [PARTITION BY col, ...]`, the table argument of a window TVF; None if not one."""
        if not (self._curr and self._curr.token_type == TokenType.TABLE and self._next
                and self._next.token_type in (TokenType.VAR, TokenType.IDENTIFIER)):
            return None
        self._advance()
        table = self._parse_table_parts()
        if self._match(TokenType.PARTITION_BY):
            # `PARTITION BY col` or `PARTITION BY (col, ...)`: a bare list would swallow the next argument.
            cols = self._parse_wrapped_csv(self._parse_column) if self._curr.token_type == TokenType.L_PAREN \
                else [self._parse_column()]
            table.set("partition_by", cols)
        return table


class FlinkSQL(Dialect):
    class Tokenizer(Tokenizer):
        QUOTES = ["'"]
        IDENTIFIERS = ["`"]
        STRING_ESCAPES = ["'", "\\"]
        # `EXECUTE STATEMENT SET BEGIN ...`: EXECUTE is not a command swallowing the statements it wraps.
        COMMANDS = Tokenizer.COMMANDS - {TokenType.EXECUTE}

    Parser = FlinkParser


@dataclass(frozen=True)
class Statement:
    tokens: tuple[Token, ...]
    sql: str  # the whole script: tokens index into it

    @property
    def line(self) -> int:
        return self.tokens[0].line

    @property
    def words(self) -> tuple[str, ...]:
        """The statement's leading keywords, upper case (`('CREATE', 'TEMPORARY', 'TABLE', ...)`)."""
        return tuple(t.text.upper() for t in self.tokens[:6])

    @property
    def text(self) -> str:
        return self.sql[self.tokens[0].start:self.tokens[-1].end + 1]

    def parse(self) -> exp.Expr:
        """The statement's syntax tree (line numbers are the script's); ParseError names the line."""
        dialect = FlinkSQL()
        trees = dialect.parser().parse(list(self.tokens), self.sql)
        return trees[0]


# Wrappers of the statements they contain: `EXECUTE STATEMENT SET BEGIN ... END;`, `BEGIN STATEMENT SET; ... END;`
# and Flink 1.15's `EXECUTE INSERT INTO ...`.
_WRAPPERS = (("EXECUTE", "STATEMENT", "SET", "BEGIN"), ("BEGIN", "STATEMENT", "SET"), ("EXECUTE",))


def split_statements(sql: str) -> list[Statement]:
    """The script's statements, in order, each with its tokens (line numbers of the script). Raises TokenError."""
    tokens = FlinkSQL().tokenize(sql)
    out: list[Statement] = []
    current: list[Token] = []
    for tok in tokens + [None]:
        if tok is None or tok.token_type == TokenType.SEMICOLON:
            current = _unwrap(current)
            if current and not (len(current) == 1 and current[0].text.upper() == "END"):
                out.append(Statement(tuple(current), sql))
            current = []
        else:
            current.append(tok)
    return out


def _unwrap(tokens: list[Token]) -> list[Token]:
    words = tuple(t.text.upper() for t in tokens)
    for wrapper in _WRAPPERS:
        if words[:len(wrapper)] == wrapper:
            return tokens[len(wrapper):]
    return tokens


__all__ = ["FlinkSQL", "Statement", "split_statements", "ParseError", "TokenError"]
