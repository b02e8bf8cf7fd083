"""The comparison's intermediate frames (classified windows and late rows, explained windows, first fire
watermarks), checkpointed on local disk only, and freed when the comparison ends.

`on_disk(df)`: a lazy local checkpoint (computed by the first job that reads it) stored DISK_ONLY. Spark's default
for a local checkpoint, memory then disk, unrolls each partition as row objects in the heap until it finds that
it does not fit, and again at each read of a block that went to disk: at 10M windows, 0.8 GB per task beside the
sorts' pages, and the driver's 4 GB heap was full (issue 46). On disk, a block is a serialized stream, written and
read without holding its partition. `freed()`: every frame `on_disk` checkpointed inside the block is
unpersisted at its end (the steps after a comparison share its session: the calibration, the GX suites).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from pyspark import StorageLevel
from pyspark.sql import DataFrame

_open = threading.local()  # per thread, the checkpointed RDDs of each open `freed` block (innermost last)


def on_disk(df: DataFrame, eager: bool = False) -> DataFrame:
    """`df` checkpointed on local disk (module doc): lazily, or now with `eager`."""
    out = df.localCheckpoint(eager=eager, storageLevel=StorageLevel.DISK_ONLY)
    scopes = getattr(_open, "scopes", None)
    if scopes:
        scopes[-1].append(out._jdf.queryExecution().logical().rdd())  # the LogicalRDD's checkpointed RDD
    return out


@contextmanager
def freed() -> Iterator[None]:
    """Unpersists, when the block ends (an error too), what `on_disk` checkpointed in it (this thread's)."""
    scopes = _open.__dict__.setdefault("scopes", [])
    mine: list = []
    scopes.append(mine)
    try:
        yield
    finally:
        scopes.pop()
        for rdd in mine:
            rdd.unpersist(False)  # not blocking: the blocks go while the caller carries on
