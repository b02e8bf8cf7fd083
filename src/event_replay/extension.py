"""The engine's Spark extension: a small jar of Java passes that run where the rows are (jvm/src/io/eventreplay/
spark/): the read-order pass of the offset check and the timeline's tick partials (io/read_order.py), the session
windows' walk (engine/windows/sessions.py) and the lookups of the driver's sorted tables by a column, without a join
(engine/lookups.py: the rows' stream watermark, the timer firings). `make install` builds it with jvm/build.sh (a JDK's javac, against the
installed pyspark) into src/event_replay/jvm/; the wheel ships it. A JVM the replay starts gets it through
`spark.jars` (spark.build_session); one that spark-submit starts needs `--jars` (the DAGs' operators pass it)."""
from __future__ import annotations

from pathlib import Path

from py4j.java_gateway import JavaClass

JAR = Path(__file__).resolve().parent / "jvm" / "event-replay-spark.jar"
PACKAGE = "io.eventreplay.spark"


class ExtensionMissing(RuntimeError):
    """A replay needs a pass of the extension and the driver's JVM does not have it."""


def extension_jars() -> str | None:
    """The extension's jar for `spark.jars` / `spark-submit --jars`, if it was built."""
    return str(JAR) if JAR.is_file() else None


def with_extension_jar(jars: str | None) -> str | None:
    """A comma-separated jar list (`spark.jars`, `--jars`) with the extension's jar added once, if it was built."""
    listed = [j for j in (jars or "").split(",") if j] + [extension_jars() or ""]
    return ",".join(dict.fromkeys(j for j in listed if j)) or None


def extension_class(spark, name: str):
    """The extension's class `name` through py4j, or None when the driver's JVM does not have the jar."""
    cls = getattr(spark._jvm, f"{PACKAGE}.{name}")
    return cls if isinstance(cls, JavaClass) else None


def missing_reason() -> str:
    """What to do when the jar is not on the driver's classpath."""
    if extension_jars() is None:
        return (f"the engine's Spark extension was not built ({JAR} is missing): run `make install` "
                "(jvm/build.sh; it needs a JDK 17 with javac)")
    return f"the engine's Spark extension is not on the driver's classpath: spark-submit needs --jars {JAR}"


def required_class(spark, name: str, what: str):
    """The extension's class `name`, which `what` cannot do without: ExtensionMissing says how to get it."""
    cls = extension_class(spark, name)
    if cls is None:
        raise ExtensionMissing(f"{what} need the engine's Spark extension: {missing_reason()}")
    return cls


def refusal(cfg) -> str | None:
    """Why `cfg` cannot run on this install, checked before Spark starts: session windows (event or ingestion
    time) are walked in the extension (engine/windows/sessions.py) and its jar was not built. None: nothing is
    missing."""
    if cfg.window.type == "session" and cfg.window.time != "processing" and extension_jars() is None:
        return f"session windows need the engine's Spark extension: {missing_reason()}"
    return None
