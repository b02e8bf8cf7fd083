"""The class archive of a replay's driver: Spark's classes as a JVM loaded them for a small replay, dumped once
(`-XX:ArchiveClassesAtExit`, the JDK's dynamic class-data sharing) and mapped by every later driver JVM
(driver_jvm.py adds `-XX:SharedArchiveFile`), which then skips reading, parsing and verifying them.

An archive is only valid for the JVM binary and the class path that made it, so its name carries a key of the Java
that spark-submit runs ($JAVA_HOME/bin/java, else `java` on the PATH), PySpark's version and SPARK_CONF_DIR (the
class path's first entry); a JVM whose key has no archive starts as before. `make install` builds it
(`python -m event_replay.class_archive`, about 20 s; nothing when it exists), into this Python's prefix (the venv),
replacing archives of other keys. A JVM that cannot map it (another JDK build, a changed class path) loads the
classes as usual: the archive only ever saves time.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path

import psutil
import pyspark

FOLDER = Path(sys.prefix) / "share" / "event-replay"
PREFIX = "spark-classes-"
_DAY = "2024-01-01"
# A replay of one small day: it loads what a replay, its reads and writes and the reports' SQL load.
_CONFIG = """source:
  path: {log}
  format: parquet
  columns: {{split: split, offset: offset, arrival_time: arrival_time, event_time: event_time, key: key}}
  splits: [p0, p1, p2, p3]
watermark: {{strategy: bounded_out_of_orderness, max_out_of_orderness: 500ms, emit: periodic, interval: 200ms,
            idle_timeout: 5s}}
window: {{type: tumbling, size: 10s, allowed_lateness: 2s, time: event}}
aggregations: {{cnt: "count(*)", total: sum(value), max_value: max(value)}}
replay: {{end_of_input: flush}}
output: {{path: {out}}}
"""


def java_binary() -> str | None:
    """The java spark-submit runs (bin/spark-class's rule), resolved to its file."""
    java = (Path(os.environ["JAVA_HOME"]) / "bin" / "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    return os.path.realpath(java) if java and os.path.isfile(java) else None


def archive_path() -> Path | None:
    """Where this Java's, PySpark's and class path's archive is (None: no java)."""
    java = java_binary()
    if java is None:
        return None
    stat = os.stat(java)
    key = "|".join((java, str(stat.st_size), str(stat.st_mtime_ns), pyspark.__version__,
                    os.environ.get("SPARK_CONF_DIR", "")))
    return FOLDER / f"{PREFIX}{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


@lru_cache(maxsize=None)
def _usable(java_home: str | None, path: str | None, conf_dir: str | None) -> Path | None:
    # The arguments are the cache's key: what archive_path() reads from the environment.
    archive = archive_path()
    return archive if archive is not None and archive.is_file() else None


def usable_archive() -> Path | None:
    """The archive a driver JVM started now can map, if it was built (cached per environment)."""
    return _usable(os.environ.get("JAVA_HOME"), os.environ.get("PATH"), os.environ.get("SPARK_CONF_DIR"))


def build_archive() -> Path:
    """Build this environment's archive from a one-day replay (module doc), atomically; the existing one as it is."""
    from .samples.days import generate_days, write_days  # lazy: numpy and the sample only when building

    target = archive_path()
    if target is None:
        raise RuntimeError("no java found (JAVA_HOME or the PATH)")
    if target.is_file():
        return target
    FOLDER.mkdir(parents=True, exist_ok=True)
    dump = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    with tempfile.TemporaryDirectory(prefix="class-archive-") as tmp:
        log, out, config = Path(tmp, "log"), Path(tmp, "out"), Path(tmp, "job.yaml")
        write_days(log, generate_days(_DAY, days=1, rows_per_day=2_000))
        config.write_text(_CONFIG.format(log=log, out=out))
        cmd = [sys.executable, "-c", "import sys; from event_replay.cli import main; sys.exit(main())", "run",
               "--config", str(config), "--partition", _DAY, "--first",
               "--conf", f"spark.driver.extraJavaOptions=-XX:ArchiveClassesAtExit={dump} -Xlog:cds=off,cds+dynamic=off"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        _wait_for_exit(str(dump))
    if done.returncode != 0 or not dump.is_file():
        dump.unlink(missing_ok=True)
        raise RuntimeError(f"the replay that dumps the archive failed ({done.returncode}): "
                           f"{(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    os.replace(dump, target)
    for old in FOLDER.glob(f"{PREFIX}*.jsa"):  # other keys' archives: another Java or PySpark than this one
        if old != target:
            old.unlink(missing_ok=True)
    _usable.cache_clear()
    return target


def _wait_for_exit(marker: str, timeout_s: float = 120.0) -> None:
    """Wait until no process's command line has `marker`: the driver JVM dumps its classes when it exits, which
    may be after its Python driver (that only closes the JVM's input) has exited."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(marker in " ".join(p.info["cmdline"] or ()) for p in psutil.process_iter(["cmdline"])):
            return
        time.sleep(0.2)


def main() -> int:
    try:
        path = build_archive()
    except RuntimeError as exc:  # no archive is no failure: drivers start as they did without one
        print(f"class archive: not built: {exc}", file=sys.stderr)
        return 0
    print(f"class archive: {path} ({path.stat().st_size >> 20} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
