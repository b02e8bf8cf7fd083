"""The soak's liveness probe of Airflow's scheduler, as Kubernetes runs one on a scheduler pod: GET the scheduler's
own health check server (`[scheduler] enable_health_check`; 200 while its job's heartbeat is younger than
`scheduler_health_check_threshold`, else 503), at most every `period` seconds. A startup probe first: after each
start, failures count only once the probe has succeeded or `startup` seconds have passed (a scheduler starting has
no heartbeat yet). `failing_for` says how long the probe has failed with no success between; the supervisor restarts
the scheduler once that reaches its bound (scripts/soak.py `Soak.probe_scheduler`).

Why the soak needs it: a scheduler whose loop lost PostgreSQL does not exit. Its `_execute` ends the LocalExecutor,
which waits for every running task first, heartbeating nothing meanwhile; a supervisor that restarts only what exited
(systemd's Restart=) waits as long as the longest of those tasks (RELIABILITY.md, "Found in Airflow")."""
from __future__ import annotations

import time
import urllib.error
import urllib.request
from typing import Callable


def healthy(url: str, timeout: float = 10.0) -> bool:
    """The health check answered 200 within `timeout` (503, a refused connection or no answer: not healthy)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


class Liveness:
    def __init__(self, url: str, period: float = 15.0, startup: float = 120.0,
                 clock: Callable[[], float] = time.monotonic):
        self.url, self.period, self.startup, self.clock = url, period, startup, clock
        self.started()

    def started(self) -> None:
        """The scheduler was (re)started: a startup probe again."""
        self.started_at = self.clock()
        self.up = False  # succeeded once since the start
        self.last_probe: float | None = None
        self.failing_since: float | None = None  # the first failure with no success since (after the startup)

    def probe(self) -> bool | None:
        """Probe if `period` has passed since the last probe: True (healthy), False (not), None (not probed now)."""
        t = self.clock()
        if self.last_probe is not None and t - self.last_probe < self.period:
            return None
        self.last_probe = t
        ok = healthy(self.url)
        if ok:
            self.up, self.failing_since = True, None
        elif self.failing_since is None and (self.up or t - self.started_at >= self.startup):
            self.failing_since = t
        return ok

    def failing_for(self) -> float:
        """Seconds since the first failure of the current run of failures (0: none)."""
        return 0.0 if self.failing_since is None else self.clock() - self.failing_since
