"""The options of a Spark driver's JVM, chosen before it starts (by spark.build_session or a DAG's spark-submit).

- Always: exit on OutOfMemoryError (fatal.py).
- Spark's classes from the class archive built for this Java and Spark (class_archive.py), when there is one: the
  JVM maps them instead of loading and verifying each (about 2 s less per start: BENCHMARKS.md).
- For a small input (at most SMALL_INPUT_BYTES read, known to the caller): the quick compiler only (C1) and the
  serial collector. A job of seconds spends most of its CPU compiling (JIT threads 43% of a day partition's CPU:
  BENCHMARKS.md); C2's optimised code pays back only over minutes of row work, past about 3M rows here.
The deployment's own options come first and keep their choice: an archive, a compiler or a collector it names is
not overridden. None of this changes a result, only how soon it comes.
"""
from __future__ import annotations

import re

from .class_archive import usable_archive
from .fatal import with_exit_on_oom

# Measured (BENCHMARKS.md, "A replay's fixed cost"): C1 only costs less CPU and wall at 1M rows (11 MB of Parquet;
# bursty rows 18 MB: 16.3 against 21.1 s), about the same at 3M (33 MB), 1.6x the wall at 10M (109 MB). Below the
# break-even point, on the safe side.
SMALL_INPUT_BYTES = 24 << 20
QUICK_COMPILER = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# A missing or stale archive is no error (the JVM loads the classes as usual): keep its notices out of the job's log.
QUIET_ARCHIVE = "-Xlog:cds=off,cds+dynamic=off"
_OWN_COMPILER = re.compile(r"-XX:[+-]?(Tiered|Use\w+GC\b)")
_OWN_ARCHIVE = re.compile(r"-XX:SharedArchiveFile|-Xshare:off|-XX:ArchiveClassesAtExit")


def is_small(input_bytes: int | None) -> bool:
    """Whether a job reading `input_bytes` (None: not known, e.g. a remote source) is short enough for C1 only."""
    return input_bytes is not None and input_bytes <= SMALL_INPUT_BYTES


def driver_java_options(options: str | None, input_bytes: int | None = None) -> str:
    """`spark.driver.extraJavaOptions` for a driver that reads about `input_bytes`: the deployment's `options`
    first, then what the module doc lists that they do not decide themselves."""
    chosen = with_exit_on_oom(options)
    archive = usable_archive()
    if archive is not None and not _OWN_ARCHIVE.search(chosen):
        chosen += f" -XX:SharedArchiveFile={archive} {QUIET_ARCHIVE}"
    if is_small(input_bytes) and not _OWN_COMPILER.search(chosen):
        chosen += f" {QUICK_COMPILER}"
    return chosen
