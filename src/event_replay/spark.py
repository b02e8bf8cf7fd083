"""One place that builds Spark sessions, so every entry point gets the same deterministic settings."""
from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

# Settings that make results independent of the machine: UTC, ANSI arithmetic, no adaptive coalescing
# surprises in the number of output files.
DETERMINISTIC_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "true",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.ui.showConsoleProgress": "false",
}


def build_session(master: str | None = None, app_name: str = "event-replay",
                  conf: dict[str, str] | None = None) -> SparkSession:
    # PySpark's workers default to `python3` from PATH, which may lack pandas/pyarrow (sessions use a grouped
    # pandas UDF): use this interpreter unless the deployment says otherwise (e.g. a cluster image's path).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    master = master or os.environ.get("REPLAY_SPARK_MASTER")
    if master:
        builder = builder.master(master)
    settings = {**DETERMINISTIC_CONF, **(conf or {})}
    effective_master = master or os.environ.get("MASTER") or "local[*]"
    if effective_master.startswith("local") and "spark.sql.shuffle.partitions" not in settings:
        # On one machine, Spark's default of 200 shuffle partitions is mostly task overhead for this engine's
        # many small stages; outputs are sorted canonically, so the count never changes a result.
        settings["spark.sql.shuffle.partitions"] = str(max(4, 2 * (os.cpu_count() or 1)))
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark
