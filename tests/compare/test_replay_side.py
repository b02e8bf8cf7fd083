"""The partitions a comparison covers (compare/replay_side.py's Scope): one partition or a range, days or hours,
its label, the one partition more read on each side, and the refusals naming the option."""
from __future__ import annotations

import pytest

from event_replay.compare.live_spec import CompareInputError
from event_replay.compare.replay_side import Scope


def test_everything_by_default():
    s = Scope.parse(None, None)
    assert s == Scope() and s.label == "all partitions" and s.widened() is None and not s.hourly


@pytest.mark.parametrize("partition, partitions, scope, label, widened", [
    ("2024-03-01", None, Scope("2024-03-01", "2024-03-01"), "2024-03-01", ("2024-02-29", "2024-03-02")),
    (None, "2023-12-31..2024-01-01", Scope("2023-12-31", "2024-01-01"), "2023-12-31..2024-01-01",
     ("2023-12-30", "2024-01-02")),
    ("2024-01-01T00", None, Scope("2024-01-01T00", "2024-01-01T00"), "2024-01-01T00",
     ("2023-12-31T23", "2024-01-01T01")),
])
def test_a_partition_or_a_range_and_one_more_on_each_side(partition, partitions, scope, label, widened):
    s = Scope.parse(partition, partitions)
    assert s == scope and s.label == label and s.widened() == widened
    assert s.hourly == ("T" in scope.first)


@pytest.mark.parametrize("partition, partitions, what", [
    ("2024-01-01", "2024-01-01..2024-01-02", "--partition"),
    ("2024-02-30", None, "--partition"),
    (None, "2024-01-03..2024-01-01", "--partitions"),
])
def test_refusals_name_the_option(partition, partitions, what):
    with pytest.raises(CompareInputError) as e:
        Scope.parse(partition, partitions)
    assert e.value.what == what
