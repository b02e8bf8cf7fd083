"""The exit codes every command shares: 0 done, 1 failed, 2 refused before any work (a config key, an option or a
carried state to fix, named on stderr), 130 interrupted.

A failure is one line on stderr: a `Failure`'s own words, the JVM's death (fatal.py), or for anything else the
exception in one line (a Py4J error: the Java exception it carries) naming the trace file that keeps its traceback
(traces.py), below a line naming the file that keeps Spark's log when the program's stderr is filtered (console.py);
with REPLAY_DEBUG set the traceback is printed above it instead. A Ctrl-C is `<prog>: interrupted`, exit 130. An Airflow task's log shows that line as
the Spark job's last words (orchestration/failures.py)."""
from __future__ import annotations

import sys
import traceback
from typing import Any, Callable

from .console import interrupted, report
from .fatal import death_line
from .semantics.config_keys import ConfigError
from .traces import DEBUG_ENV, TRACEBACK_IN, debugging, first_line, write_exception


class Failure(RuntimeError):
    """A failure whose message says all a user needs (what failed, what was left, what to do): exit 1 with that one
    line, no traceback (e.g. io.commit.NoSpaceError)."""


def guarded(prog: str, run: Callable[[], int], refusals: tuple[type[BaseException], ...] = ()) -> int:
    """run(), its failures turned into exit codes; `refusals`: more errors that mean exit 2 (their text says what to
    fix)."""
    try:
        return run()
    except ConfigError as exc:
        print(f"{prog}: config error: key '{exc.key}': {exc.why}", file=sys.stderr)
        return 2
    except refusals as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        if type(exc) is KeyboardInterrupt:  # a Terminated (SIGTERM) said so already (orchestration/cancel.py)
            print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Failure as exc:
        print(f"{prog}: failed: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - any failure must give a non-zero exit with the cause
        if interrupted():  # Ctrl-C while Py4J was mid-call: PySpark's handler fails with a Py4J error (console.py)
            print(f"{prog}: interrupted", file=sys.stderr)
            return 130
        died = death_line(exc)  # the JVM died under the call (fatal.py): its one line, not py4j's traceback
        if died is not None:
            print(died, file=sys.stderr)
            return 1
        report(prog)
        print(failure_line(prog, exc), file=sys.stderr)
        return 1


def failure_line(prog: str, exc: BaseException) -> str:
    """`<prog>: failed: <the exception in one line> (traceback in <file>; ...)`, or the traceback itself above a
    shorter line with REPLAY_DEBUG."""
    if debugging():
        traceback.print_exception(exc)
        return f"{prog}: failed: {first_line(exc)}"
    try:
        where = f"{TRACEBACK_IN}{write_exception(prog, exc)}"
    except OSError as err:  # no trace file: the line still says what failed
        where = f"no traceback kept: {err}"
    return f"{prog}: failed: {first_line(exc)} ({where}; {DEBUG_ENV}=1 prints it)"


def command(prog: str, run: Callable[[Any], int],
            refusals: tuple[type[BaseException], ...] = ()) -> Callable[[Any], int]:
    """A subcommand's `func` for its parser: `run(args)` under `guarded`, `refusals` exiting 2."""
    return lambda args: guarded(prog, lambda: run(args), refusals)
