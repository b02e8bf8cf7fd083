"""Fault injection for the crash-safety tests: `REPLAY_FAILPOINT=<name>[,<name>...]` makes the process kill
itself (SIGKILL: no cleanup, no finally, exactly like `kill -9` or a lost node) when it reaches that point;
`<name>:enospc` makes the point fail as a write on a full disk does instead (OSError ENOSPC, cleanup runs).

Points, in the order a run reaches them:
    mid_staging     the windows staged, the other outputs possibly still being written (beside it)
    after_staging   every output (and the state) staged, no commit journal yet
    after_journal   the journal written (the commit point), nothing renamed
    between_renames the first dataset renamed into place, the others not
    before_state    every dataset in place, the carried state not yet (partition runs)
    before_cleanup  everything in place, the journal and staging not yet removed
Unset in production: the check is one dictionary lookup.
"""
from __future__ import annotations

import errno
import os
import signal
import sys

from ..fatal import run_before_exit

ENV = "REPLAY_FAILPOINT"
POINTS = ("mid_staging", "after_staging", "after_journal", "between_renames", "before_state", "before_cleanup")


def failpoint(name: str) -> None:
    armed = os.environ.get(ENV)
    if not armed:
        return
    points = armed.split(",")
    if f"{name}:enospc" in points:
        raise OSError(errno.ENOSPC, f"No space left on device (failpoint {name})")
    if name in points:
        sys.stderr.write(f"replay: failpoint {name}: killing the process (SIGKILL)\n")
        sys.stderr.flush()
        run_before_exit()  # console.py: the line reaches the terminal before the kill
        os.kill(os.getpid(), signal.SIGKILL)
