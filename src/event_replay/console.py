"""What the `replay` program shows on its terminal: its own lines, not Spark's.

`quiet_stderr(prog)` (cli.py, when `replay` runs as the program and REPLAY_DEBUG is not set) makes the process's
stderr (fd 2, which the driver JVM Spark starts inherits) a pipe read by a thread:
- Spark's log lines (`26/11/28 05:03:30 WARN Utils: ...`), the JVM's and Spark's start-up notices and Py4J's logged
  errors, and every Python or Java traceback (traces.TraceFilter's rules) go to one log file;
- every other line (the command's own, fatal.py's) is shown as it comes.
When the command fails, one line of context names the log file (`report(prog)`), above the failure's own line
(below fatal.py's line when the JVM died: its watchdog empties the pipe before it ends the process).

`interrupted()` says whether a SIGINT reached the process: PySpark's own SIGINT handler cancels the jobs through
Py4J, which can fail mid-call, so a Ctrl-C may surface as a Py4J error; exits.guarded asks this to say "interrupted"
(exit 130) instead.
"""
from __future__ import annotations

import os
import re
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .fatal import before_exit
from .traces import DEBUG_ENV, TraceFilter, trace_file

SPARK_LOG = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ")
_NOTICES = ("WARNING: Using incubator modules", "Using Spark's default log4j", "Setting default log level to",
            "To adjust logging level use", "ERROR:root:", "ERROR:py4j", "WARNING:py4j")
_TRACE_RUN = re.compile(r"^\(\d+ lines of a traceback in ")  # TraceFilter's line for a trace it kept
_DRAINED = "\0replay-console-drained"


class _Traces(TraceFilter):
    """TraceFilter keeping its traces in the reader's one file."""

    def __init__(self, reader: "_Reader"):
        super().__init__(reader.prog)
        self._reader = reader

    def _keep(self, line: str) -> None:
        self.path = self._reader.file()
        super()._keep(line)


class _Reader:
    """Reads the pipe: hidden lines into `path`, shown ones to `shown` (the terminal's fd)."""

    def __init__(self, prog: str, read_fd: int, shown: int):
        self.prog, self.path = prog, None
        self.hidden = self.traces = 0
        self.drained = threading.Event()
        self._traces = _Traces(self)  # the tracebacks go to the same file as the log lines
        self._read, self._shown = read_fd, shown

    def file(self) -> Path:
        """The log file, created with the first line it keeps."""
        if self.path is None:
            self.path = trace_file(f"{self.prog}-spark-log")
        return self.path

    def run(self) -> None:
        with open(self._read, encoding="utf-8", errors="replace", closefd=True) as lines:
            for line in lines:
                if line.rstrip("\n") == _DRAINED:
                    self._show(self._traces.end())
                    self.drained.set()
                else:
                    self._line(line.rstrip("\n"))

    def _line(self, line: str) -> None:
        if SPARK_LOG.match(line) or line.startswith(_NOTICES):
            self._show(self._traces.end())  # an exception line held back is shown before the log line is hidden
            with self.file().open("a") as f:
                f.write(line + "\n")
            self.hidden += 1
            return
        self._show(self._traces.push(line))

    def _show(self, lines: list[str]) -> None:
        for line in lines:
            if _TRACE_RUN.match(line):
                self.traces += 1
                continue
            os.write(self._shown, (line + "\n").encode())


_reader: _Reader | None = None
_signals: int | None = None  # the read end of the signal wakeup pipe
_sigint = False


@contextmanager
def quiet_stderr(prog: str) -> Iterator[None]:
    """The block's stderr filtered (module doc); on the way out every line written so far has been sorted and the
    terminal's stderr is fd 2 again (a JVM started inside keeps writing into the pipe, still sorted)."""
    global _reader
    if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        yield
        return
    _watch_signals()
    sys.stderr.flush()
    terminal = os.dup(2)
    read_fd, write_fd = os.pipe()
    _reader = _Reader(prog, read_fd, terminal)
    threading.Thread(target=_reader.run, name="replay-console", daemon=True).start()
    os.dup2(write_fd, 2)
    os.close(write_fd)
    before_exit(lambda: (report(prog), _drain()))  # the JVM died (fatal.py ends the process): show its line first
    try:
        yield
    finally:
        _drain()
        os.dup2(terminal, 2)
        os.close(terminal)


def _drain() -> None:
    """Wait until the reader has sorted every line written so far (the JVM may hold the pipe open: wait for a
    marker, not for the pipe's end)."""
    sys.stderr.flush()
    _reader.drained.clear()
    os.write(2, (_DRAINED + "\n").encode())
    _reader.drained.wait(10)


def report(prog: str) -> None:
    """After a failure: one line naming the file that keeps what Spark logged, if it logged anything."""
    r = _reader
    if r is None:
        return
    _drain()
    if not (r.hidden or r.traces):
        return
    traces = f" and {r.traces} traceback{'s' if r.traces != 1 else ''}" if r.traces else ""
    lines = f"{r.hidden} line{'s' if r.hidden != 1 else ''}"
    print(f"{prog}: Spark's log ({lines}{traces}) is in {r.path}; {DEBUG_ENV}=1 prints it here",
          file=sys.stderr, flush=True)


def _watch_signals() -> None:
    """Every signal a Python handler catches (PySpark's SIGINT handler included) leaves its number in a pipe."""
    global _signals
    if _signals is not None or threading.current_thread() is not threading.main_thread():
        return
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    _signals = r


def interrupted() -> bool:
    """A SIGINT reached the process since quiet_stderr began (False when it did not watch)."""
    global _sigint
    while _signals is not None and not _sigint:
        try:
            got = os.read(_signals, 4096)
        except BlockingIOError:
            break
        _sigint = signal.SIGINT in got
    return _sigint
