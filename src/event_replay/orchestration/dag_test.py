"""`airflow dags test` whose task logs show in the Airflow UI: `make demo` runs its DAG through this.

`airflow dags test` runs every task in its own process (real task execution, no scheduler), but writes the task
logs to its console only, so the UI shows no log for the run's tasks. This runs Airflow's own `dags test` command,
with the same arguments, and while each task runs it copies the process's stdout and stderr (file descriptors 1
and 2: Airflow's structlog lines, the stdlib loggers, and what subprocesses such as spark-submit print) to that
task's file as well, where the UI reads task logs: [logging] base_log_folder, named by Airflow's FileTaskHandler
from [logging] log_filename_template. The UI shows a line that is not JSON as it is.

    python -m event_replay.orchestration.dag_test DAG_ID [LOGICAL_DATE] [-c CONF] ...
"""
from __future__ import annotations

import contextlib
import os
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
    with open(path, "ab") as log:
        def copy() -> None:
            with contextlib.suppress(OSError, ValueError):  # the file closed after DRAIN_SECONDS: stop
                while chunk := os.read(read_end, 1 << 16):
                    os.write(console[0], chunk)
                    log.write(chunk)
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
