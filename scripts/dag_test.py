"""`airflow dags test` whose task logs show in the Airflow UI: `make demo` runs its DAG through this.

`airflow dags test` runs every task in its own process (real task execution, no scheduler), but writes the task
logs to its console only, so the UI shows no log for the run's tasks. This runs Airflow's own `dags test` command,
with the same arguments, and while each task runs it copies the process's stdout and stderr (file descriptors 1
and 2: Airflow's structlog lines, the stdlib loggers, and what subprocesses such as spark-submit print) to that
task's file as well, where the UI reads task logs: [logging] base_log_folder, named by Airflow's FileTaskHandler
from [logging] log_filename_template.

Each line goes to the file as one JSON record, as the task runner writes the logs of a run triggered from the UI:
{"timestamp", "level", "event", "logger", ...} from the console line's own fields, or, for a line that is not one
(the rest of a multi-line message, a subprocess's output), {"timestamp": the last console line's, "event": line}.
The UI's log reader takes a plain line that starts with something date-like ("2024-01-01 ...", "5000 ...") for that
line's time and re-sorts the log by it; a JSON record's time is its own.

    python scripts/dag_test.py DAG_ID [LOGICAL_DATE] [-c CONF] ...
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import sys
import threading
from pathlib import Path

DRAIN_SECONDS = 10  # a subprocess the task left running may hold the pipe open: stop copying after this


def task_log_path(ti) -> Path:
    """Where the UI looks for this try's log."""
    from airflow.configuration import conf
    from airflow.utils.log.file_task_handler import FileTaskHandler

    handler = FileTaskHandler(base_log_folder=conf.get("logging", "base_log_folder"))
    return Path(handler.local_base, handler._render_filename(ti, ti.try_number))


# structlog's console line: `2026-11-25T18:52:58.849177Z [info     ] event [logger.name] key=value ...`
_CONSOLE = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z) \[(\w+)\s*\] (.*)$")
_LOGGER = re.compile(r"\s\[([A-Za-z_][\w.]*)\](?=(\s+[A-Za-z_]\w*=.*)?$)")
_FIELD = re.compile(r"([A-Za-z_]\w*)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)")


class JsonLines:
    """Turns the console's lines into the JSON records of a task log (module doc), one line at a time."""

    def __init__(self) -> None:
        self.timestamp: str | None = None
        self.pending = b""

    def record(self, line: str) -> dict:
        m = _CONSOLE.match(line)
        if not m:
            stamp = self.timestamp or dt.datetime.now(dt.timezone.utc).isoformat().replace("+00:00", "Z")
            return {"timestamp": stamp, "event": line}
        self.timestamp, level, rest = m.group(1), m.group(2), m.group(3)
        out: dict = {"timestamp": self.timestamp, "level": level}
        tail = None
        for tail in _LOGGER.finditer(rest):
            pass
        if tail is None:
            return {**out, "event": rest.rstrip()}
        out["event"] = rest[:tail.start()].rstrip()
        out["logger"] = tail.group(1)
        for key, value in _FIELD.findall(rest[tail.end():]):
            if key not in out:
                out[key] = value[1:-1] if value[:1] in "'\"" and value[-1:] == value[:1] else value
        return out

    def feed(self, chunk: bytes) -> bytes:
        """The complete lines of `chunk` (and what came before) as JSON lines; a partial line waits."""
        *lines, self.pending = (self.pending + chunk).split(b"\n")
        return b"".join(self._encode(line) for line in lines)

    def flush(self) -> bytes:
        rest, self.pending = self.pending, b""
        return self._encode(rest) if rest.strip() else b""

    def _encode(self, raw: bytes) -> bytes:
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if not line.strip():
            return b""
        return (json.dumps(self.record(line), ensure_ascii=False) + "\n").encode()


@contextlib.contextmanager
def task_log(ti):
    """Copy fds 1 and 2 to the task's log file (and still to the console) while the block runs."""
    path = task_log_path(ti)
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush(), sys.stderr.flush()
    console = os.dup(1), os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 1), os.dup2(write_end, 2)
    os.close(write_end)
    records = JsonLines()
    with open(path, "ab") as log:
        def copy() -> None:
            with contextlib.suppress(OSError, ValueError):  # the file closed after DRAIN_SECONDS: stop
                while chunk := os.read(read_end, 1 << 16):
                    os.write(console[0], chunk)
                    log.write(records.feed(chunk))
                    log.flush()
                log.write(records.flush())
                log.flush()
        pump = threading.Thread(target=copy, name="task-log", daemon=True)
        pump.start()
        try:
            yield path
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(console[0], 1), os.dup2(console[1], 2)  # the pipe's last write ends close: the pump ends
            pump.join(DRAIN_SECONDS)
            for fd in console:
                os.close(fd)
    if not pump.is_alive():
        os.close(read_end)


def _with_task_logs(run_task):
    def run(*, ti, task, **kwargs):
        with task_log(ti):
            return run_task(ti=ti, task=task, **kwargs)
    return run


def main(argv: list[str]) -> int:
    from airflow.__main__ import main as airflow_main
    from airflow.sdk.definitions import dag as sdk_dag

    # dag.test() runs each task through this module-level helper: the one place that knows which task runs.
    sdk_dag._run_task = _with_task_logs(sdk_dag._run_task)
    sys.argv = ["airflow", "dags", "test", *argv]
    return airflow_main() or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
