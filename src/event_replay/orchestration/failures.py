"""Why a backfill run failed, in one line that names the cause first, for the task log and the Replay runs page.

A task that cannot go on logs one line (the cause, in the form's or the job's words), keeps it as the XCom
`replay_failure` of its task instance (the runs page reads it from Airflow's metadata DB: it is there for every
failed run, also one refused before it wrote anything) and ends with `Failed`: a SystemExit, which Airflow's task
runner logs as one line ("Task exited"), with no traceback; retries apply as for any failure (the tasks that refuse
a request have none).

For a failed Spark job the cause is read off the last lines the job printed (`cause_of`): the `replay:` line the CLI
prints for a refusal or an error (exits.py), else the last exception line of its traceback.

The job's output goes to the task log through `JobTail.show` without its tracebacks (Python, Py4J and Java: event_replay.traces):
each run of them is one line naming the trace file that keeps them, and a failed job's line names that file, so the
failure stays the last line of the log with a few lines of context above it. With REPLAY_DEBUG set the task log
shows them all.
"""
from __future__ import annotations

import logging
import re
from collections import deque
from typing import Any, Sequence

from airflow.sdk import get_current_context

from ..traces import TRACEBACK_IN, TraceFilter, debugging

log = logging.getLogger(__name__)

FAILURE_KEY = "replay_failure"
DRY_RUN_KEY = "replay_dry_run"
TAIL_LINES = 200  # the last lines of a Spark job's output kept to find its cause
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Refused|Missing|Locked)): (.+)$")
_GENERIC = ("replay: failed", "replay quality: failed")
_FINAL_WORDS = (": failed: ", ": refused", ": config error: ")  # exits.py's lines: the cause whatever follows
# What a run says as it goes (pipeline.py, range_replay.py): never the cause of its failure.
_PROGRESS = re.compile(r"^replay: (\S+ (continues the carried state of|starts a new history)|partition \d+ of \d+ |"
                       r"\S+\.\.\S+ replayed as one span|resuming )")


def is_progress(line: str) -> bool:
    """Whether a `replay:` line is what a run says as it goes (never a failure's line)."""
    return bool(_PROGRESS.match(line))


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


class JobTail(deque):
    """The last lines of a task's Spark jobs (all of them, tracebacks too: cause_of reads them) and the filter that
    keeps the tracebacks out of the task log (one per task attempt: its trace file)."""

    def __init__(self) -> None:
        super().__init__(maxlen=TAIL_LINES)
        self.traces: TraceFilter | None = None

    def show(self, line: str) -> list[str]:
        """One line of a job's output kept (stripped); the lines the task log shows for it (module doc)."""
        self.append(str(line).rstrip("\n"))
        if debugging():
            return [line]
        if self.traces is None:
            self.traces = TraceFilter(_task_name())
        return self.traces.push(line)

    def end(self) -> list[str]:
        """The job's output ended: the lines still held back."""
        return [] if self.traces is None or debugging() else self.traces.end()


def _task_name() -> str:
    """The trace file's name: the task instance's dag, run, task and try, when there is one."""
    ti = current_ti()
    if ti is None:
        return "replay-task"
    return ".".join(str(getattr(ti, k, "")) for k in ("dag_id", "run_id", "task_id")) + \
        f".try{getattr(ti, 'try_number', 1)}"


def cause_of(lines: Sequence[str], fallback: str) -> str:
    """The cause of a failed job from its last output lines (module doc), with the trace file that keeps the job's
    tracebacks (unless the job's own line names one); `fallback` when no line names a cause."""
    cause = _cause(lines, fallback)
    traces = getattr(lines, "traces", None)
    if traces is not None and traces.path is not None and TRACEBACK_IN not in cause:
        cause += f" ({TRACEBACK_IN}{traces.path})"
    return cause


def _cause(lines: Sequence[str], fallback: str) -> str:
    """The program's own last words: its failure line (exits.py), else a `replay:` line after the last exception line
    (a progress line before a crash is no cause), else the last exception."""
    stripped = [ln.strip() for ln in lines if ln.strip()]
    said = [i for i, ln in enumerate(stripped)
            if ln.startswith(("replay:", "replay quality:")) and ln not in _GENERIC and "SIGTERM" not in ln
            and not is_progress(ln)]
    final = [i for i in said if any(w in stripped[i] for w in _FINAL_WORDS)]
    raised = [i for i, ln in enumerate(stripped) if _EXCEPTION.match(ln)]
    if final:
        return stripped[final[-1]]
    if said and (not raised or said[-1] > raised[-1]):
        return stripped[said[-1]]
    if not raised:
        return fallback
    i = raised[-1]
    m = _EXCEPTION.match(stripped[i])
    java = stripped[i + 1][2:] if i + 1 < len(stripped) and stripped[i + 1].startswith(": ") else ""
    m = _EXCEPTION.match(java) or m  # Py4J's error: the Java exception it carries, on its next line
    return f"{m.group(1).rsplit('.', 1)[-1]}: {m.group(3)}"


def tail_buffer() -> JobTail:
    return JobTail()
