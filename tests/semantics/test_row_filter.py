"""semantics/row_filter.py: the reference model's evaluation of a filter, SQL's three-valued logic included."""
from __future__ import annotations

import pytest

from event_replay.semantics.model import LogRow
from event_replay.semantics.row_filter import RowFilter, UnsupportedFilter
from event_replay.semantics.source_config import COLUMN_ROLES

ROLES = {r: r for r in COLUMN_ROLES}
ROW = LogRow("p1", 7, 1000, 900, "user-1", {"status": "403", "bytes": 12, "agent": None, "ratio": 0.5})


@pytest.mark.parametrize("text, kept", [
    ("status = '403'", True),
    ("status <> '403'", False),
    ("status != '404' AND bytes >= 12", True),
    ("bytes % 5 = 2 AND -bytes < 0", True),
    ("bytes * 2 + 1 - 1 = 24", True),
    ("ratio < 1", True),
    ("split = 'p1' AND offset = 7 AND arrival_time - event_time = 100 AND key LIKE 'user-_'", True),
    ("key LIKE 'user%' AND key NOT LIKE '%2'", True),
    ("bytes BETWEEN 10 AND 12", True),
    ("bytes NOT BETWEEN 10 AND 12", False),
    ("status IN ('200', '403')", True),
    ("status NOT IN ('200', '404')", True),
    ("(status = '200' OR bytes = 12) AND NOT status = '500'", True),
    # A null predicate drops the row; NOT and AND/OR keep SQL's unknowns.
    ("agent = 'bot'", False),
    ("NOT agent = 'bot'", False),
    ("agent <> 'bot' OR bytes = 12", True),
    ("agent <> 'bot' AND bytes = 12", False),
    ("agent <> 'bot' AND bytes = 13", False),
    ("status IN ('200', NULL)", False),
    ("NOT status IN ('200', NULL)", False),
    ("status IN ('403', NULL)", True),
    ("agent IS NULL AND status IS NOT NULL", True),
    ("agent <=> NULL AND NOT status <=> NULL", True),
    ("missing_column = 1", False),  # a column the row lacks is null
])
def test_keeps_only_rows_whose_predicate_is_true(text, kept):
    assert RowFilter(text, ROLES).keeps(ROW) is kept


def test_role_columns_are_read_under_their_source_names():
    f = RowFilter("user_id = 'user-1' AND ts = 900", {**ROLES, "key": "user_id", "event_time": "ts"})
    assert f.keeps(ROW)


def test_negative_remainder_has_the_dividends_sign():
    row = LogRow("p0", 0, 0, 0, "k", {"v": -7})
    assert RowFilter("v % 3 = -1", ROLES).keeps(row)


@pytest.mark.parametrize("text", ["status = 403", "abs(bytes) = 12", "bytes / 2 = 6", "status = 'x' ESCAPE", "bytes"])
def test_outside_the_subset_is_refused(text):
    with pytest.raises((UnsupportedFilter, ValueError)):
        RowFilter(text, ROLES).keeps(ROW)
