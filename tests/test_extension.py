"""The engine's Spark extension (event_replay/extension.py): found on the driver's classpath, or a clear refusal."""
from __future__ import annotations

import pytest

from event_replay import extension


def test_the_built_jar_is_on_the_test_sessions_classpath(spark):
    assert extension.extension_jars() is not None  # make install built it (jvm/build.sh)
    for name in ("OffsetRuns", "SessionWalk", "SortedLookup"):
        assert extension.extension_class(spark, name) is not None


def test_a_missing_class_names_the_cure(spark, tmp_path, monkeypatch):
    with pytest.raises(extension.ExtensionMissing, match="--jars"):
        extension.required_class(spark, "NoSuchPass", "this replay")
    monkeypatch.setattr(extension, "JAR", tmp_path / "event-replay-spark.jar")
    with pytest.raises(extension.ExtensionMissing, match="make install"):
        extension.required_class(spark, "NoSuchPass", "this replay")


def test_the_jar_joins_a_jar_list_once():
    jar = extension.extension_jars()
    assert extension.with_extension_jar(None) == jar
    assert extension.with_extension_jar(f"a.jar,{jar}") == f"a.jar,{jar}"


def test_only_session_windows_are_refused_without_the_jar(tmp_path, monkeypatch):
    from strategies import config

    wm = {"max_out_of_orderness": 0}
    sessions = config(watermark=wm, window={"type": "session", "gap": 1000})
    assert extension.refusal(sessions) is None  # built here
    monkeypatch.setattr(extension, "JAR", tmp_path / "event-replay-spark.jar")
    assert "make install" in extension.refusal(sessions)
    assert extension.refusal(config(watermark=wm)) is None  # tumbling: the offset check sorts instead
    processing = config(window={"type": "session", "gap": 1000, "time": "processing"})
    assert extension.refusal(processing) is None  # processing-time sessions run on the replay clock, no walk
