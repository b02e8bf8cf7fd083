"""Why a backfill run failed, in one line that names the cause first, for the task log and the Replay runs page.

A task that cannot go on logs one line (the cause, in the form's or the job's words), keeps it as the XCom
`replay_failure` of its task instance (the runs page reads it from Airflow's metadata DB: it is there for every
failed run, also one refused before it wrote anything) and ends with `Failed`: a SystemExit, which Airflow's task
runner logs as one line ("Task exited"), with no traceback; retries apply as for any failure (the tasks that refuse
a request have none).

For a failed Spark job the cause is read off the last lines the job printed (`cause_of`): the `replay:` line the CLI
prints for a refusal or an error (exits.py), else the last exception line of its traceback.
"""
from __future__ import annotations

import logging
import re
from collections import deque
from typing import Any, Iterable, Iterator, Sequence

from airflow.sdk import get_current_context

log = logging.getLogger(__name__)

FAILURE_KEY = "replay_failure"
DRY_RUN_KEY = "replay_dry_run"
TAIL_LINES = 200  # the last lines of a Spark job's output kept to find its cause
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Refused|Missing|Locked)): (.+)$")
_GENERIC = ("replay: failed", "replay quality: failed")
# What a run says as it goes (pipeline.py, range_replay.py): never the cause of its failure.
_PROGRESS = re.compile(r"^replay: (\S+ (continues the carried state of|starts a new history)|partition \d+ of \d+ |"
                       r"\S+\.\.\S+ replayed as one span|resuming )")


class Failed(SystemExit):
    """Ends a task as failed after its cause was logged (module doc); `reason` is that line."""

    def __init__(self, reason: str, code: int = 1):
        super().__init__(code)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def remember(ti: Any, reason: str) -> None:
    """Keep the line as the task instance's XCom `replay_failure` (none without a task instance: unit tests)."""
    if ti is None:
        return
    try:
        ti.xcom_push(key=FAILURE_KEY, value=reason)
    except Exception as exc:  # noqa: BLE001 - the failure itself must still be reported
        log.warning("could not keep the failure's cause for the runs page: %s", exc)


def current_ti() -> Any:
    try:

        return get_current_context()["ti"]
    except Exception:  # noqa: BLE001 - outside a running task
        return None


def fail(reason: str, ti: Any = None, code: int = 1) -> "Failed":
    """Log the cause as one line, keep it for the runs page; returns the exception to raise."""
    log.error("%s", reason)
    remember(ti if ti is not None else current_ti(), reason)
    return Failed(reason, code)


def tee(lines: Iterable[str], tail: deque) -> Iterator[str]:
    """Pass `lines` through, keeping the last ones (stripped) in `tail`."""
    for line in lines:
        tail.append(str(line).rstrip("\n"))
        yield line


def cause_of(lines: Sequence[str], fallback: str) -> str:
    """The cause of a failed job from its last output lines (module doc); `fallback` when none names one."""
    stripped = [ln.strip() for ln in lines if ln.strip()]
    for line in reversed(stripped):
        if line.startswith(("replay:", "replay quality:")) and line not in _GENERIC and "SIGTERM" not in line \
                and not _PROGRESS.match(line):
            return line
    for line in reversed(stripped):
        m = _EXCEPTION.match(line)
        if m:
            return f"{m.group(1).rsplit('.', 1)[-1]}: {m.group(3)}"
    return fallback


def tail_buffer() -> deque:
    return deque(maxlen=TAIL_LINES)
