"""semantics/aggregates.py: the reference's exact subset of Spark SQL aggregates (nulls ignored, empty input null
except count) and the refusal of anything else."""
from __future__ import annotations

import pytest

from event_replay.semantics.aggregates import (UnsupportedAggregate, aggregate_call, compile_aggregate,
                                               compile_aggregates)
from event_replay.semantics.model import LogRow

ROWS = [LogRow("p", i, 10 * i, 5 * i, "k", {"v": v}) for i, v in enumerate([4, None, 1, 7])]


def test_one_call_over_one_column():
    assert aggregate_call(" SUM( v ) ") == ("sum", "v")
    assert aggregate_call("count(*)") == ("count", "*")
    assert aggregate_call("sum(v) + 1") is None and aggregate_call("sum(distinct v)") is None


def test_each_aggregate_over_payload_and_core_columns():
    got = compile_aggregates({"n": "count(*)", "nv": "count(v)", "s": "sum(v)", "lo": "min(v)", "hi": "max(v)",
                              "mean": "avg(v)", "last": "max(event_time)", "first": "min(offset)"})(iter(ROWS))
    assert got == {"n": 4, "nv": 3, "s": 12, "lo": 1, "hi": 7, "mean": 4.0, "last": 15, "first": 0}


def test_no_values_give_null_but_count_gives_zero():
    assert [compile_aggregate(e)([ROWS[1]]) for e in ("count(v)", "sum(v)", "min(v)", "avg(v)")] == [0, None, None,
                                                                                                    None]


@pytest.mark.parametrize("expr", ["sum(*)", "sum(v) / count(*)", "stddev(v)"])
def test_anything_else_is_refused(expr):
    with pytest.raises(UnsupportedAggregate):
        compile_aggregate(expr)
