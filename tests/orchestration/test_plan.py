"""Partition planning (orchestration/plan.py): the runs of a range of days or hours in order, each the pipeline's
own plan of its partition (all but the last holding their windows open), missing partitions refused unless
allowed, continuing from a predecessor's state that must be there. (Which partition comes before: tests/history/test_history_partitions.py.)"""
from __future__ import annotations

import pytest

from event_replay.history.state_files import MANIFEST
from event_replay.layout import state_dir
from event_replay.orchestration import plan as pl
from event_replay.pipeline import OnePartition


def test_plan_orders_partitions_holds_all_but_the_last():
    p = pl.plan_range(["2024-01-03", "2024-01-01", "2024-01-02"], "2024-01-01", "2024-01-03", end_of_input="flush")
    assert p.partitions == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert [(r.first, r.previous, r.end_of_input) for r in p.runs] == [
        (True, None, "hold"), (False, "2024-01-01", "hold"), (False, "2024-01-02", "flush")]
    assert pl.PlannedRuns.from_dict(p.to_dict()) == p
    # each run is the pipeline's own plan of its partition, the plan `replay run --partition` makes
    assert all(isinstance(r, OnePartition) for r in p.runs) and p.runs[1].head.id == "2024-01-02"
    assert p.to_dict()["runs"][1] == {"partition": "2024-01-02", "first": False, "end_of_input": "hold",
                                      "previous": "2024-01-01", "missing": False}  # as run records keep it


def test_hours_are_planned_as_days_are():
    p = pl.plan_range(["2024-01-01T23", "2024-01-02T00"], "2024-01-01T23", "2024-01-02T01", end_of_input="hold",
                      allow_missing=True, continue_from="2024-01-01T22")
    assert [(r.partition.id, r.previous, r.allow_missing) for r in p.runs] == [
        ("2024-01-01T23", "2024-01-01T22", False), ("2024-01-02T00", "2024-01-01T23", False),
        ("2024-01-02T01", "2024-01-02T00", True)]
    with pytest.raises(pl.PlanError, match="dt=2024-01-02/hour=01"):
        pl.plan_range(["2024-01-02T00"], "2024-01-02T00", "2024-01-02T01", end_of_input="hold")
    with pytest.raises(pl.PlanError, match="both"):
        pl.plan_range([], "2024-01-02", "2024-01-02T01", end_of_input="hold")


def test_plan_missing_partitions_fail_unless_allowed():
    avail = ["2024-01-01", "2024-01-04"]
    with pytest.raises(pl.PlanError, match="dt=2024-01-02, dt=2024-01-03"):
        pl.plan_range(avail, "2024-01-01", "2024-01-04", end_of_input="flush")
    p = pl.plan_range(avail, "2024-01-01", "2024-01-04", end_of_input="hold", allow_missing=True)
    assert p.missing == ("2024-01-02", "2024-01-03")
    # Missing days replay as empty partitions: the clock runs through them as in one replay of the range.
    assert [(r.partition.id, r.previous, r.end_of_input, r.allow_missing) for r in p.runs] == [
        ("2024-01-01", None, "hold", False), ("2024-01-02", "2024-01-01", "hold", True),
        ("2024-01-03", "2024-01-02", "hold", True), ("2024-01-04", "2024-01-03", "hold", False)]
    only_missing = pl.plan_range(avail, "2024-01-02", "2024-01-03", end_of_input="flush", allow_missing=True)
    assert [(r.allow_missing, r.end_of_input) for r in only_missing.runs] == [(True, "hold"), (True, "flush")]
    with pytest.raises(pl.PlanError, match="before"):
        pl.plan_range(avail, "2024-01-04", "2024-01-01", end_of_input="flush")


def test_continuing_needs_the_predecessors_state(tmp_path):
    run = pl.plan_range(["2024-01-02"], "2024-01-02", "2024-01-02", end_of_input="hold",
                        continue_from="2024-01-01").runs[0]
    assert not run.first and run.previous == "2024-01-01"
    with pytest.raises(pl.PlanError, match="no carried state"):
        pl.check_state(tmp_path, run)
    folder = tmp_path / state_dir("", "2024-01-01").lstrip("/")
    (folder / "rows").mkdir(parents=True)
    with pytest.raises(pl.PlanError):  # a folder without its manifest is not a state (the manifest is written last)
        pl.check_state(tmp_path, run)
    (folder / MANIFEST).write_text("{}")
    pl.check_state(tmp_path, run)
    pl.check_state(tmp_path, pl.plan_range([], "2024-01-02", "2024-01-02", end_of_input="hold",
                                           allow_missing=True).runs[0])  # --first: no state needed
    pl.check_state("s3a://bucket/out", run)  # not listed without Spark: the job's read_state refuses it there
