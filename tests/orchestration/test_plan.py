"""Partition planning (orchestration/plan.py): the days of a dt= source, the runs of a range in order (all but the
last holding their windows open), missing days refused unless allowed, continuing from a predecessor's state."""
from __future__ import annotations

import datetime as dt

import pytest

from event_replay.orchestration import plan as pl

D = dt.date.fromisoformat


def test_list_partitions_only_days(project):
    assert pl.list_partitions(project[2]) == [D("2024-01-01"), D("2024-01-02"), D("2024-01-04")]
    with pytest.raises(pl.PlanError):
        pl.list_partitions(project[0] / "absent")


def test_plan_orders_partitions_holds_all_but_the_last():
    avail = [D("2024-01-03"), D("2024-01-01"), D("2024-01-02")]
    p = pl.plan_range(avail, D("2024-01-01"), D("2024-01-03"), end_of_input="flush")
    assert p.partitions == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert [(r.first, r.previous, r.end_of_input) for r in p.runs] == [
        (True, None, "hold"), (False, "2024-01-01", "hold"), (False, "2024-01-02", "flush")]
    assert p.runs[1].job_args("/c.yaml") == ["--config", "/c.yaml", "--partition", "2024-01-02",
                                             "--end-of-input", "hold", "--previous", "2024-01-01"]
    assert p.runs[0].job_args("/c.yaml")[-1] == "--first"
    assert pl.Plan.from_dict(p.to_dict()) == p


def test_plan_missing_partitions_fail_unless_allowed():
    avail = [D("2024-01-01"), D("2024-01-04")]
    with pytest.raises(pl.PlanError, match="dt=2024-01-02, dt=2024-01-03"):
        pl.plan_range(avail, D("2024-01-01"), D("2024-01-04"), end_of_input="flush")
    p = pl.plan_range(avail, D("2024-01-01"), D("2024-01-04"), end_of_input="hold", allow_missing=True)
    assert p.missing == ("2024-01-02", "2024-01-03")
    # Missing days replay as empty partitions: the clock runs through them as in one replay of the range.
    assert [(r.partition, r.previous, r.end_of_input, r.missing) for r in p.runs] == [
        ("2024-01-01", None, "hold", False), ("2024-01-02", "2024-01-01", "hold", True),
        ("2024-01-03", "2024-01-02", "hold", True), ("2024-01-04", "2024-01-03", "hold", False)]
    assert p.runs[1].job_args("c")[-3:] == ["--previous", "2024-01-01", "--allow-missing"]
    assert "--allow-missing" not in p.runs[3].job_args("c")
    only_missing = pl.plan_range(avail, D("2024-01-02"), D("2024-01-03"), end_of_input="flush", allow_missing=True)
    assert [(r.missing, r.end_of_input) for r in only_missing.runs] == [(True, "hold"), (True, "flush")]


def test_continuing_needs_the_predecessors_state(tmp_path):
    avail = [D("2024-01-01"), D("2024-01-02")]
    assert pl.predecessor(avail, D("2024-01-01")) is None
    assert pl.predecessor(avail, D("2024-01-05")) == "2024-01-02"
    run = pl.plan_range(avail, D("2024-01-02"), D("2024-01-02"), end_of_input="hold",
                        continue_from="2024-01-01").runs[0]
    assert not run.first and "--first" not in run.job_args("c")
    with pytest.raises(pl.PlanError, match="no carried state"):
        pl.check_state(tmp_path, run)
    pl.state_path(tmp_path, "2024-01-01").mkdir(parents=True)
    with pytest.raises(pl.PlanError):  # an empty folder is not a state (the job writes it all or nothing)
        pl.check_state(tmp_path, run)
    (pl.state_path(tmp_path, "2024-01-01") / "part-0.parquet").write_bytes(b"x")
    pl.check_state(tmp_path, run)
