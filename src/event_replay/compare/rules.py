"""The exactness rule of each aggregate: when a live value and a replay value count as equal.

- Counts, integers, decimals, strings and booleans: equal, exactly.
- min/max of any type: equal, exactly (no arithmetic: the order of the rows cannot change the result).
- Floating-point sums and averages (and any other floating expression): exactly equal when the live job's summation
  order is known to be the replay's (`--summation-order known`); otherwise (the default, `unknown`: a live job adds
  a window's rows in the order they reached its task, which depends on its parallelism and network) equal within
  a relative tolerance:

      |live - replay| <= tol * max(1, |live|, |replay|)        (tol = --float-tolerance, default 1e-9)

  Adding n doubles in another order changes the result by at most about n * 2^-53 * sum(|x|); 1e-9 covers windows of
  millions of same-signed values. Values that cancel (sum(|x|) much larger than |sum|) may need a larger tolerance.

Nulls: two nulls are equal; a null and a value differ. NaN equals NaN.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .live_spec import CompareInputError

SUMMATION_ORDERS = ("unknown", "known")
DEFAULT_TOLERANCE = 1e-9
_MIN_MAX = re.compile(r"^\s*(min|max)\s*\(", re.IGNORECASE)
_COUNT = re.compile(r"^\s*count\s*\(", re.IGNORECASE)


@dataclass(frozen=True)
class Rule:
    aggregate: str
    expression: str
    exact: bool
    why: str
    tolerance: float = 0.0

    def describe(self) -> str:
        return (f"{self.aggregate} = {self.expression}: " +
                ("exact" if self.exact else f"within a relative {self.tolerance:g}") + f" ({self.why})")


def rules_for(aggregations: Mapping[str, str], replay_types: Mapping[str, T.DataType], compared: Sequence[str],
              summation_order: str = "unknown", tolerance: float = DEFAULT_TOLERANCE) -> list[Rule]:
    if summation_order not in SUMMATION_ORDERS:
        raise CompareInputError("--summation-order", f"unknown value {summation_order!r} (known or unknown)")
    if not (0 <= tolerance < 1):
        raise CompareInputError("--float-tolerance", f"must be in [0, 1), got {tolerance}")
    rules = []
    for name in compared:
        expr, dtype = aggregations[name], replay_types[name]
        if _COUNT.match(expr):
            rules.append(Rule(name, expr, True, "a count"))
        elif isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
            rules.append(Rule(name, expr, True, "integers"))
        elif isinstance(dtype, T.DecimalType):
            rules.append(Rule(name, expr, True, "decimals: exact arithmetic"))
        elif not isinstance(dtype, (T.FloatType, T.DoubleType)):
            rules.append(Rule(name, expr, True, dtype.simpleString()))
        elif _MIN_MAX.match(expr):
            rules.append(Rule(name, expr, True, "min/max: no arithmetic, any order gives the same value"))
        elif summation_order == "known":
            rules.append(Rule(name, expr, True, "floating point, the live job's summation order is known"))
        else:
            rules.append(Rule(name, expr, False, "floating point, the live job's summation order is unknown",
                              tolerance))
    return rules


def equal(rule: Rule, live: Column, replay: Column) -> Column:
    """Never null: whether the two values count as equal under the rule."""
    both_null = live.isNull() & replay.isNull()
    if rule.exact:
        return live.eqNullSafe(replay)
    nan = F.isnan(live) & F.isnan(replay)
    close = F.abs(live - replay) <= F.lit(rule.tolerance) * F.greatest(F.lit(1.0), F.abs(live), F.abs(replay))
    return both_null | F.coalesce(live.eqNullSafe(replay) | nan | close, F.lit(False))
