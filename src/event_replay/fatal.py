"""A fatal JVM error ends the run at once, with exit 1 and one line that says what ran out and what to raise.

An OutOfMemoryError in a thread of Spark's driver (its scheduler, a broadcast, a result being collected) kills that
thread and nothing else: the job waits forever for an answer, and an Airflow task waits until its timeout. So the
driver's JVM runs with `-XX:+ExitOnOutOfMemoryError` (spark.py adds it), and a watchdog thread of the Python driver
(`watch`) checks every few seconds that the JVM still lives, that Spark's scheduler thread still runs, and that
the context stops only when the program asks (SparkContext.stop). When the JVM or the scheduler is gone, or a stop
of the context has not ended the run within its bound, it prints the cause, kills the JVM it started (if it did)
and exits the process with 1; `exits.guarded` gives the same line when the main thread noticed first (a py4j call
that lost its JVM). Every stop is bounded from the moment the watchdog first sees it (the JVM's context stopping,
or a thread of the program in SparkContext.stop), and watched until the program's stop is done, its Python part
too: a context that stopped on its own (as on a failed scheduler event, which can leave a job waiting forever, or
the program's own stop, called on the job's error, stalled) gets 30 s for the run to end; a stop the program asked
for gets 5 minutes to finish (one that waits for a listener, or for an accumulator update that never comes, would
hang the run).

A process that exits this way leaves its output lock and staging folder; the next run on the output removes both
(the lock's holder is a dead pid on this host: io/lock.py; orphan staging: io/commit.py).
"""
from __future__ import annotations

import atexit
import logging
import os
import subprocess
import sys
import threading
import time

from py4j.protocol import Py4JError, Py4JJavaError, Py4JNetworkError

EXIT_ON_OOM = "-XX:+ExitOnOutOfMemoryError"
_OOM_EXIT_CODES = {3: "the JVM's heap", 52: "an executor's heap"}  # HotSpot's ExitOnOutOfMemoryError; Spark's OOM
_SCHEDULER_THREAD = "dag-scheduler-event-loop"
_PERIOD_S = 2.0
_LOST_WAIT_S = 30.0
_UNASKED_STOP_GRACE_S = 30.0  # for the program to end by itself (its error) once its context stopped on its own
# For a stop the program asked for to finish: a healthy one takes seconds (a cluster's executors, an event log to
# upload: a minute at worst); one that waits for a listener or a thread that never returns would hang the run.
_ASKED_STOP_BOUND_S = 300.0

_watched: dict = {}  # the watched context's JVM process and heap, for `death_line`; how its stop was first seen
_stop = threading.Event()  # set at interpreter exit: a JVM ending with the process is no failure
_before_exit: list = []  # called before the watchdog ends the process (console.py: its stderr shown first)


def before_exit(fn) -> None:
    """Have `fn()` called after the watchdog's line is printed, before it ends the process."""
    _before_exit.append(fn)


def run_before_exit() -> None:
    """Call the before_exit functions: the process is about to end without Python's own exit (os._exit, SIGKILL)."""
    for fn in _before_exit:
        try:
            fn()
        except Exception:  # noqa: BLE001 - the process ends anyway: its line is printed
            pass


def with_exit_on_oom(java_options: str | None) -> str:
    """Driver JVM options with EXIT_ON_OOM added (the deployment's own options kept, first)."""
    options = (java_options or "").strip()
    return options if EXIT_ON_OOM in options else f"{options} {EXIT_ON_OOM}".strip()


def watch(spark, prog: str = "replay") -> None:
    """Watch this session's JVM until its context stops (one watchdog per context)."""
    sc = spark.sparkContext
    if _watched.get("context") is sc:
        return
    if not _watched:
        atexit.register(_stop.set)
        # py4j logs every lost connection with a traceback on the root logger; the line of death_line says it.
        logging.getLogger().addFilter(_LostConnectionChatter())
    _watched.update(context=sc, proc=getattr(sc._gateway, "proc", None), prog=prog, stop_seen=None,
                    heap_mb=int(sc._jvm.java.lang.Runtime.getRuntime().maxMemory()) >> 20,
                    memory=sc.getConf().get("spark.driver.memory", "1g"))
    threading.Thread(target=_loop, args=(sc, _scheduler_thread(sc)), name="replay-jvm-watchdog",
                     daemon=True).start()


class _LostConnectionChatter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Exception while sending command")


def death_line(error: BaseException | None = None) -> str | None:
    """The one line for a watched JVM that died (None while it lives, or if none is watched). `error`: what the
    caller caught; a lost connection to the JVM waits a moment for the process to end (a kill is not instant)."""
    proc = _watched.get("proc")
    if proc is None:
        return None
    maybe, lost = _lost_connection(error)
    try:
        code = proc.wait(_LOST_WAIT_S) if maybe else proc.poll()
    except subprocess.TimeoutExpired:  # a killed JVM with a large heap can take long to go, on a loaded machine
        code = None
    if code is None:
        return (f"{_watched['prog']}: lost the connection to the Spark JVM (it stopped answering; its error, if "
                "any, is above)") if lost else None
    what = _OOM_EXIT_CODES.get(code)
    if what is not None:
        return (f"{_watched['prog']}: out of memory: {what} ({_watched['heap_mb']} MB, spark.driver.memory="
                f"{_watched['memory']}) was full; raise spark.driver.memory (e.g. --conf spark.driver.memory=8g) "
                "or, on a cluster, spark.executor.memory")
    return f"{_watched['prog']}: the Spark JVM exited with code {code} (its error is above)"


def _lost_connection(error: BaseException | None) -> tuple[bool, bool]:
    """(the JVM may have gone: a py4j failure that is not a Java exception; the connection itself was lost)."""
    maybe = lost = False
    while error is not None:
        lost |= isinstance(error, (ConnectionError, Py4JNetworkError))
        maybe |= lost or (isinstance(error, Py4JError) and not isinstance(error, Py4JJavaError))
        error = error.__cause__ or error.__context__
    return maybe, lost


def _loop(sc, scheduler) -> None:
    stop = None  # (when first seen, whether the program asked) once the context is seen stopping: it never un-stops
    while not _stop.wait(_PERIOD_S):
        if _watched.get("context") is not sc:
            return  # the program replaced the context: nothing of this one to watch
        asked = _stop_asked()
        if sc._jsc is None and not asked:
            return  # the program's stop is done (SparkContext.stop sets _jsc to None, then ends its Python part)
        scheduler_runs, stopping = _context_state(sc, scheduler)
        if stop is None and (stopping or asked):
            stop = (time.monotonic(), asked)
            _watched["stop_seen"] = "asked" if asked else "on its own"
        line = death_line()
        if line is None and not scheduler_runs and stop is None:  # a stop ends the scheduler thread too
            line = (f"{_watched['prog']}: Spark's scheduler thread died (its error is above): the run cannot "
                    "finish; if it was an OutOfMemoryError, raise spark.driver.memory")
        line = line or _stalled_stop_line(stop)
        if line is not None and not _stop.is_set():
            print(line, file=sys.stderr, flush=True)
            run_before_exit()
            _kill_started_jvm()
            os._exit(1)


def _stalled_stop_line(stop: tuple[float, bool] | None) -> str | None:
    """The line for a stop that has not ended the run in its bound (None while within it, or without a stop): a
    context that stopped on its own gets _UNASKED_STOP_GRACE_S for the program to end by itself, a stop the program
    asked for _ASKED_STOP_BOUND_S to finish (the same clock when the program asks after Spark stopped the context:
    the first sight counts)."""
    if stop is None:
        return None
    since, asked = stop
    bound = _ASKED_STOP_BOUND_S if asked else _UNASKED_STOP_GRACE_S
    if time.monotonic() - since < bound:
        return None
    if asked:
        return (f"{_watched['prog']}: Spark's context did not finish stopping in {bound:.0f} s (its error, if any, is "
                "above): the run cannot finish")
    return (f"{_watched['prog']}: Spark's context stopped on its own (its error is above) and the run had not ended "
            f"{bound:.0f} s later: it cannot finish")


def _kill_started_jvm() -> None:
    """Kill the JVM this process started, if it still runs: a JVM whose scheduler died may never finish its own
    shutdown, and would outlive the run holding its memory and the run's output pipes (a caller reading them, as
    an Airflow task does, would wait). A JVM that started this process (spark-submit) is left to end by itself."""
    proc = _watched.get("proc")
    if proc is not None and proc.poll() is None:
        proc.kill()


def _scheduler_thread(sc):
    """The JVM's scheduler thread (None if not found: then only the process is watched)."""
    for t in sc._jvm.java.lang.Thread.getAllStackTraces().keySet().toArray():
        if t.getName() == _SCHEDULER_THREAD:
            return t
    return None


def _context_state(sc, scheduler) -> tuple[bool, bool]:
    """(the scheduler thread runs, the context is stopping or stopped), read in this order: a stop marks the context
    before it ends the thread. py4j failures give (True, False): the process check decides those."""
    try:
        return scheduler is None or bool(scheduler.isAlive()), bool(sc._jsc.sc().isStopped())
    except Exception:  # noqa: BLE001 - a JVM mid-shutdown, or the program's stop just ended (_jsc is None)
        return True, False


def _stop_asked() -> bool:
    """A thread of this program is in SparkContext.stop: the program asked for the stop the context is in (a
    context stopping on its own has none; the stop sets `_jsc` to None when done, and _loop returns)."""
    from pyspark import SparkContext  # lazy: exits.py imports this module, and commands without Spark import it

    for frame in sys._current_frames().values():
        while frame is not None:
            if frame.f_code is SparkContext.stop.__code__:
                return True
            frame = frame.f_back
    return False
