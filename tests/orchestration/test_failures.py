"""orchestration/failures.py: a failed task's cause in one line, first, kept for the runs page, with no traceback."""
from __future__ import annotations

import logging

import pytest

from event_replay.orchestration.failures import FAILURE_KEY, Failed, cause_of, fail


def test_a_failed_job_is_named_by_its_own_last_words():
    """The cause of a failed Spark job, read off its output: the CLI's `replay:` line, else the exception."""
    out = ["26/11/25 WARN Utils: x", "Traceback (most recent call last):", '  File "x.py", line 1',
           "event_replay.io.lock.OutputLocked: /out is held by pid 7 on vm", "replay: failed"]
    assert cause_of(out, "?") == "OutputLocked: /out is held by pid 7 on vm"
    assert cause_of(["replay: config error: key 'window.size': must be > 0"], "?") == \
        "replay: config error: key 'window.size': must be > 0"
    assert cause_of(["nothing useful"], "spark-submit exited with 1") == "spark-submit exited with 1"
    # What the run said as it went is no cause: the exception after it is.
    progress = ["replay: 2024-01-02 continues the carried state of 2024-01-01",
                "replay: 2024-01-02..2024-01-03 replayed as one span in 9.1 s (2 partitions, rows read 40)",
                "replay: partition 1 of 2 2024-01-02: rows read 20, firings 3, late rows 0, committed in 0.2 s"]
    assert cause_of(progress + out[1:], "?") == "OutputLocked: /out is held by pid 7 on vm"
    assert cause_of(["replay: 2024-01-01 starts a new history"], "spark-submit exited with 1") == \
        "spark-submit exited with 1"


class _TI:
    def __init__(self):
        self.pushed = {}

    def xcom_push(self, key, value):
        self.pushed[key] = value


def test_fail_logs_one_line_keeps_it_and_exits_without_a_traceback(caplog):
    ti = _TI()
    with caplog.at_level(logging.ERROR):
        exc = fail("Refused: Last day: 2024-01-01 is before the first day 2024-01-03", ti, code=2)
    assert isinstance(exc, SystemExit) and exc.code == 2 and isinstance(exc, Failed)
    assert str(exc) == ti.pushed[FAILURE_KEY] == "Refused: Last day: 2024-01-01 is before the first day 2024-01-03"
    assert [r.getMessage() for r in caplog.records] == [str(exc)]
    with pytest.raises(SystemExit):
        raise exc
