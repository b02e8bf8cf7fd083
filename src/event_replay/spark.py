"""One place that builds Spark sessions, so every entry point gets the same deterministic settings; and the one way
to turn a small local table into a DataFrame (`local_frame`)."""
from __future__ import annotations

import os
import sys
from typing import Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from .driver_jvm import driver_java_options
from .extension import with_extension_jar
from .fatal import watch
from .semantics.config_keys import ConfigError

# Settings that make results independent of the machine: UTC, ANSI arithmetic, no adaptive coalescing
# surprises in the number of output files.
DETERMINISTIC_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "true",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.ui.showConsoleProgress": "false",
}


def build_session(master: str | None = None, app_name: str = "event-replay",
                  conf: dict[str, str] | None = None, input_bytes: int | None = None) -> SparkSession:
    """The session every entry point uses (module doc). `input_bytes`: about what the job reads, when known
    before the JVM starts: a small input gets the quick compiler (driver_jvm.py)."""
    # PySpark's workers default to `python3` from PATH, which may lack this project's packages: use this
    # interpreter unless the deployment says otherwise (e.g. a cluster image's path).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    master = master or os.environ.get("REPLAY_SPARK_MASTER")
    if master:
        builder = builder.master(master)
    settings = {**DETERMINISTIC_CONF, **(conf or {})}
    _add_extension_jar(settings)
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):  # this builder starts the JVM (spark-submit started its own)
        _driver_jvm_settings(settings, master, input_bytes)
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    watch(spark)
    _driver_arrow_pool()
    local_shuffle_partitions(spark, user_set="spark.sql.shuffle.partitions" in settings)
    spark.sparkContext.setLogLevel("WARN")
    return spark


def local_driver_memory() -> str:
    """The driver memory of a local master nobody sized: a quarter of the machine's memory, between 1g and 4g (Spark's own default, 1g, is the whole JVM in local mode: the driver's tables, every task
    and the shuffles share it). REPLAY_LOCAL_DRIVER_MEMORY overrides it."""
    if os.environ.get("REPLAY_LOCAL_DRIVER_MEMORY"):
        return os.environ["REPLAY_LOCAL_DRIVER_MEMORY"]
    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
    return f"{max(1024, min(4096, total_mb // 4 // 512 * 512))}m"


def _driver_jvm_settings(settings: dict[str, str], master: str | None, input_bytes: int | None) -> None:
    """Settings of a driver JVM this builder starts: its options (driver_jvm.py: exit on OutOfMemoryError, the
    class archive, the quick compiler for a small input), and on a local master the memory of local_driver_memory()
    unless the deployment chose one (--conf, SPARK_DRIVER_MEMORY, PYSPARK_SUBMIT_ARGS or spark-defaults.conf)."""
    key = "spark.driver.extraJavaOptions"
    settings[key] = driver_java_options(settings.get(key) or _spark_default(key), input_bytes)
    master = master or os.environ.get("MASTER") or _spark_default("spark.master") or "local[*]"
    chosen = ("spark.driver.memory" in settings or os.environ.get("SPARK_DRIVER_MEMORY")
              or "driver-memory" in os.environ.get("PYSPARK_SUBMIT_ARGS", "")
              or "spark.driver.memory" in os.environ.get("PYSPARK_SUBMIT_ARGS", "")
              or _spark_default("spark.driver.memory"))
    if master.startswith("local") and not chosen:
        settings["spark.driver.memory"] = local_driver_memory()


def _spark_default(key: str) -> str | None:
    """`key` from the deployment's spark-defaults.conf ($SPARK_CONF_DIR, else $SPARK_HOME/conf), if any."""
    folder = os.environ.get("SPARK_CONF_DIR") or (os.path.join(os.environ["SPARK_HOME"], "conf")
                                                  if os.environ.get("SPARK_HOME") else None)
    try:
        with open(os.path.join(folder, "spark-defaults.conf"), encoding="utf-8") as f:
            for line in f:
                parts = line.split(None, 1)
                if len(parts) == 2 and parts[0] == key:
                    return parts[1].strip()
    except (OSError, TypeError):
        pass
    return None


def driver_memory_note(spark: SparkSession) -> str:
    """What the summary line says of memory: the driver JVM's heap, and the peak of its old generation (what
    stayed alive: the tables and caches a run holds; the young generation fills and empties all the time)."""
    jvm = spark.sparkContext._jvm
    heap = int(jvm.java.lang.Runtime.getRuntime().maxMemory())
    old = [int(p.getPeakUsage().getUsed()) for p in jvm.java.lang.management.ManagementFactory
           .getMemoryPoolMXBeans().toArray() if "Old Gen" in str(p.getName()) or "Tenured" in str(p.getName())]
    return f"driver heap {heap >> 20} MB" + (f", old generation peak {max(old) >> 20} MB" if old else "")


def _add_extension_jar(settings: dict[str, str]) -> None:
    """The engine's Spark extension (extension.py) on the classpath of a JVM this builder starts, beside any
    jars the caller gave. A JVM that spark-submit started has its classpath already: there it takes --jars
    (the DAGs' operators pass it; spark.jars set here would replace the submitted jars and not reach the driver)."""
    jars = with_extension_jar(settings.get("spark.jars"))
    if jars is not None and not os.environ.get("PYSPARK_GATEWAY_PORT"):
        settings["spark.jars"] = jars


def _driver_arrow_pool() -> None:
    """Arrow on the driver allocates from the C allocator numpy uses, unless ARROW_DEFAULT_MEMORY_POOL says
    otherwise. The driver's large tables pass from Arrow to numpy (the read's tick partials, the timeline); with
    Arrow's own pool (mimalloc or jemalloc) each allocator kept the pages the other had freed, and the driver's
    peak was both peaks together (BENCHMARKS.md has the figure)."""
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        pa.set_memory_pool(pa.system_memory_pool())


def local_shuffle_partitions(spark: SparkSession, user_set: bool = False) -> None:
    """On one machine, Spark's default of 200 shuffle partitions is mostly task overhead for this engine's many small
    stages: use a few per core instead. Decided from the running context's master (whatever set it: --master,
    MASTER, spark-submit), and only when nobody chose a count; outputs are sorted canonically, so the count never
    changes a result."""
    sc = spark.sparkContext
    if user_set or not sc.master.startswith("local") or sc.getConf().contains("spark.sql.shuffle.partitions"):
        return
    spark.conf.set("spark.sql.shuffle.partitions", str(max(4, 2 * sc.defaultParallelism)))


def parse_conf(pairs: Sequence[str]) -> dict[str, str]:
    """`--conf KEY=VALUE` arguments as a Spark conf dict; a malformed one is refused (exit 2) naming `--conf`."""
    conf = {}
    for pair in pairs:
        k, sep, v = pair.partition("=")
        if not sep or not k.strip():
            raise ConfigError("--conf", f"expects KEY=VALUE, got {pair!r}")
        conf[k.strip()] = v.strip()
    return conf


def local_frame(spark: SparkSession, rows: Sequence[tuple], schema) -> DataFrame:
    """A small table held by the driver (tuples in the order of `schema`, a StructType or a DDL string) as a
    DataFrame, through Arrow: the JVM reads it as a local table. (A DataFrame made from a Python list is a Python
    RDD instead: the first job that reads it starts Python workers, a second or more per process, and each of its
    tasks unpickles the rows in Python.)"""
    if isinstance(schema, str):
        schema = T._parse_datatype_string(schema)
    try:
        arrow_schema = to_arrow_schema(schema)
    except TypeError:  # a type Arrow cannot hold (only a source's own columns could have one)
        if rows:
            raise
        return spark.createDataFrame(spark.sparkContext.emptyRDD(), schema)  # no partition: no task reads it
    columns = list(zip(*rows)) if rows else [()] * len(arrow_schema)
    table = pa.table([pa.array(list(c), type=f.type) for c, f in zip(columns, arrow_schema)], schema=arrow_schema)
    return spark.createDataFrame(table)
