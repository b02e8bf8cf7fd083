"""Tracebacks out of the logs a person reads, into a file the failure's one line names.

A failure is one line (exits.py for a command, orchestration/failures.py for a task); the traceback behind it, a
Python one with Py4J's Java trace inside, or the Java stack traces Spark logs, goes to a trace file:
`$REPLAY_TRACE_DIR/<name>.log`, else `<system temp dir>/replay-traces/<name>.log`. With REPLAY_DEBUG set (to
anything but "" or "0") the traces are printed where they happened, as before.

`TraceFilter` sorts a job's output lines (as Airflow's spark-submit hook logs them: stripped) into those a log
shows and those the trace file keeps:
- a Python traceback: from `Traceback (most recent call last):` to its exception line (the first line after a
  frame's source line that is no frame: any exception class), with the chained ones (`During handling of the
  above exception...`, `The above exception was the direct cause...`);
- a Java stack trace: its frames (`at pkg.Class.method(File.java:12)`, `... 12 more`), `Caused by:` and
  `Suppressed:` lines, and the exception line just above its first frame (Py4J's `: org.apache...Exception: ...`).
A run of trace lines shows as one line in the log: how many lines and where they are.
"""
from __future__ import annotations

import itertools
import keyword
import os
import re
import tempfile
import time
import traceback
from pathlib import Path
from typing import Iterable, Iterator

DEBUG_ENV, DIR_ENV = "REPLAY_DEBUG", "REPLAY_TRACE_DIR"
TRACEBACK_IN = "traceback in "  # how a failure's line names its trace file: "(traceback in <path>)"
_FRAME = re.compile(r"^(at [\w$.<>/-]+\(.*\)|\.\.\. \d+ (more|common frames omitted)|(Caused by|Suppressed): .*)$")
_PY_START = "Traceback (most recent call last):"
_PY_CHAIN = ("During handling of the above exception, another exception occurred:",
             "The above exception was the direct cause of the following exception:")
_PY_FRAME = re.compile(r'^File ".*", line \d+')
_PY_CARETS = re.compile(r"^[\^~]+$")  # Python 3.11's markers under a frame's source line
_PY_RAISED = re.compile(r"^([A-Za-z_][\w.]*)(: .*)?$")  # `module.Class: message`, or a bare `Class`
_EXCEPTION = re.compile(r"^:?\s*[A-Za-z_][\w.$]*(Error|Exception|Exit|Interrupt|Refused|Missing|Locked|Terminated)"
                        r"(: .*)?$")
# A Java exception that only wraps its cause: Spark's `awaitResult`, or a class name and nothing after its colon.
_WRAPPER = re.compile(r"(Exception thrown in awaitResult|^[\w.$]+:?\s*$)")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def debugging() -> bool:
    """REPLAY_DEBUG is set: tracebacks are printed where they happen."""
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def trace_file(name: str) -> Path:
    """A new trace file for `name` (made safe), created empty so that no other trace takes its path, in
    REPLAY_TRACE_DIR or the temp dir's `replay-traces/` (created)."""
    folder = Path(os.environ.get(DIR_ENV) or Path(tempfile.gettempdir()) / "replay-traces")
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    base = f"{_UNSAFE.sub('_', name).strip('_') or 'replay'}-{stamp}-{os.getpid()}"
    for n in itertools.count():  # two traces of one name in one second: a file each
        path = folder / (f"{base}.log" if n == 0 else f"{base}-{n}.log")
        try:
            path.touch(exist_ok=False)
            return path
        except FileExistsError:
            continue
    raise AssertionError("unreachable")


def write_exception(name: str, exc: BaseException) -> Path:
    """The exception's full traceback in a new trace file; its path."""
    path = trace_file(name)
    path.write_text("".join(traceback.format_exception(exc)))
    return path


def first_line(exc: BaseException) -> str:
    """`Type: message` in one line; for a Py4J error, the Java exception it carries (its `: ...` line), or when that
    only wraps another (`Exception thrown in awaitResult:`, no message of its own) the first cause that says more."""
    text = str(exc)
    java = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith(": ")), None)
    if java:
        if _WRAPPER.search(java):
            causes = (ln.strip()[len("Caused by: "):] for ln in text.splitlines() if ln.strip().startswith("Caused by: "))
            java = next((c for c in causes if not _WRAPPER.search(c)), java)
        return java
    head = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return f"{type(exc).__name__}: {head}" if head else type(exc).__name__


def _exception_line(s: str) -> bool:
    """After a frame's `File` line: the exception line rather than the frame's source line (a source line of one
    word is a keyword: `raise`, `return`; `x: int = 1` reads as an exception, a rare source line in a trace)."""
    m = _PY_RAISED.match(s)
    return bool(m) and not keyword.iskeyword(m.group(1))


class TraceFilter:
    """Sorts output lines (module doc); trace lines are written to `path`, opened when the first one comes."""

    def __init__(self, name: str):
        self.name = name
        self.path: Path | None = None
        self.lines = 0  # trace lines kept in the file so far
        self._in_python = False
        self._after_frame = False  # the last Python line was a frame's `File "...", line N`: its source line may follow
        self._after_exception = False  # a Python traceback just ended: a Java trace may continue it
        self._pending: str | None = None  # a possible exception line, until the next line says whether a trace follows
        self._block = 0  # lines of the trace run going on

    def feed(self, lines: Iterable[str]) -> Iterator[str]:
        """The lines a log shows (trace runs as one line each), in order."""
        for raw in lines:
            yield from self.push(raw)
        yield from self.end()

    def push(self, raw: str) -> list[str]:
        """One more line of the output: the lines the log shows now (none while a trace runs; an exception line is
        held until the next line says whether frames follow)."""
        return list(self._one(str(raw).rstrip("\n")))

    def end(self) -> list[str]:
        """The output ended: the lines still held."""
        return [*self._flush_pending(trace=False), *self._end_block()]

    def _one(self, line: str) -> Iterator[str]:
        s = line.strip()
        if not s and (self._block or self._in_python):  # the blank lines inside a chained traceback
            self._keep(line)
            return
        if self._in_python:
            self._keep(line)
            # The lines are stripped, so a source line reads like any other: a traceback is `File` lines, each with
            # at most one source line (and carets); the next other line is the exception, whatever its class.
            after_frame, self._after_frame = self._after_frame, bool(_PY_FRAME.match(s))
            if self._after_frame or s.startswith(_PY_START) or _PY_CARETS.match(s):
                return
            if after_frame and not _exception_line(s):
                return  # the frame's source line
            self._in_python, self._after_exception = False, True
            return
        if s == _PY_START or (self._block and s in _PY_CHAIN):
            yield from self._flush_pending(trace=True)
            self._in_python, self._after_frame = True, False
            self._keep(line)
            return
        if _FRAME.match(s):
            yield from self._flush_pending(trace=True)
            self._keep(line)
            return
        yield from self._flush_pending(trace=False)
        if _EXCEPTION.match(s) or (self._after_exception and s.startswith(": ")):
            self._pending = line  # an exception line: part of a trace if frames follow
            return
        self._after_exception = False
        yield from self._end_block()
        yield line

    def _flush_pending(self, trace: bool) -> Iterator[str]:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        if trace:
            self._keep(pending)
        else:
            yield from self._end_block()
            yield pending

    def _keep(self, line: str) -> None:
        if self.path is None:
            self.path = trace_file(self.name)
        with self.path.open("a") as f:
            f.write(line + "\n")
        self.lines += 1
        self._block += 1

    def _end_block(self) -> Iterator[str]:
        if self._block:
            yield f"({self._block} lines of a {TRACEBACK_IN}{self.path}; {DEBUG_ENV}=1 logs them here)"
            with self.path.open("a") as f:  # type: ignore[union-attr]
                f.write("\n")
            self._block = 0
        self._after_exception = False
