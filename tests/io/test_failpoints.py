"""io/failpoints.py: an armed point kills the process (SIGKILL, no cleanup) or fails as a full disk; an unarmed
one, or another point, does nothing. (Every point in a real run: tests/io/test_crash_safety.py.)"""
from __future__ import annotations

import errno
import signal
import subprocess
import sys

import pytest

from event_replay.io.failpoints import ENV, POINTS, failpoint


def test_unarmed_or_other_points_do_nothing(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    failpoint("after_journal")
    monkeypatch.setenv(ENV, "mid_staging,before_cleanup:enospc")
    failpoint("after_journal")
    failpoint("mid_staging:enospc")  # a name is never read as a point with a mode


def test_an_enospc_point_fails_as_a_full_disk(monkeypatch):
    monkeypatch.setenv(ENV, "mid_staging,before_cleanup:enospc")
    with pytest.raises(OSError) as err:
        failpoint("before_cleanup")
    assert err.value.errno == errno.ENOSPC


def test_an_armed_point_kills_the_process():
    code = "from event_replay.io.failpoints import failpoint; failpoint('between_renames'); print('survived')"
    done = subprocess.run([sys.executable, "-c", code], env={"PATH": "/usr/bin:/bin", ENV: "between_renames"},
                          capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL
    assert "survived" not in done.stdout and "failpoint between_renames" in done.stderr


def test_the_points_in_run_order():
    assert POINTS[0] == "mid_staging" and POINTS[-1] == "before_cleanup" and len(set(POINTS)) == len(POINTS)
