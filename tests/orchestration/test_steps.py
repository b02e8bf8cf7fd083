"""The steps after the replay (orchestration/steps.py): each runs only after a replay that succeeded, whatever the
steps before it did; the run's steps with their outcome, duration and a failed one's line."""
from __future__ import annotations

import pytest
from airflow.sdk.exceptions import AirflowSkipException

from backfill_cases import RunTI
from event_replay.orchestration.failures import FAILURE_KEY
from event_replay.orchestration.steps import after_replay, failed_line, run_steps, steps_text

CAUSE = "calibration: refused: option params.calibrate_idle_timeout: bad duration '5 parsecs'"


def test_a_step_runs_after_a_replay_that_succeeded_whatever_the_calibration_did():
    ti = RunTI({"plan": ("success", 0.4), "replay_partitions": ("success", 25.04), "calibrate": ("failed", 3.96)},
               {("calibrate", FAILURE_KEY): CAUSE})
    steps = after_replay(ti, "replay_partitions")  # no skip: the comparison and data quality run
    assert steps == [{"task": "plan", "state": "success", "seconds": 0.4},  # in the order the run takes them
                     {"task": "replay_partitions", "state": "success", "seconds": 25.0},
                     {"task": "calibrate", "state": "failed", "seconds": 4.0, "line": CAUSE}]
    assert failed_line(steps) == f"calibrate failed: {CAUSE}"
    assert steps_text(steps) == "plan success 0.4 s, replay_partitions success 25.0 s, calibrate failed 4.0 s"


@pytest.mark.parametrize("state", ["failed", "upstream_failed", "skipped", None])
def test_a_step_is_skipped_when_the_replay_did_not_succeed(state):
    ti = RunTI({"plan": ("success", 1.0), **({"replay_partition": (state, 2.0)} if state else {})})
    with pytest.raises(AirflowSkipException, match=f"the replay task replay_partition ended {state or 'without'}"):
        after_replay(ti, "replay_partition")


def test_no_failed_step_no_line():
    steps = run_steps(RunTI({"replay_partitions": ("success", None), "data_quality": ("skipped", 0.0)}),
                      "event_time_backfill", "manual__steps")
    assert failed_line(steps) is None and steps_text(steps) == "replay_partitions success, data_quality skipped 0.0 s"
