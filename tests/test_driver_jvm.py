"""The options of a driver's JVM (driver_jvm.py): exit on OOM always, the class archive when built, the quick
compiler for a small input only; the deployment's own choices first and kept."""
from __future__ import annotations

from event_replay.class_archive import usable_archive
from event_replay.driver_jvm import QUICK_COMPILER, SMALL_INPUT_BYTES, driver_java_options, is_small
from event_replay.fatal import EXIT_ON_OOM


def test_only_a_known_small_input_gets_the_quick_compiler():
    assert is_small(0) and is_small(90_000) and is_small(SMALL_INPUT_BYTES)
    assert not is_small(SMALL_INPUT_BYTES + 1) and not is_small(None)  # None: a remote source, not listed
    assert QUICK_COMPILER in driver_java_options(None, 90_000)
    assert QUICK_COMPILER not in driver_java_options(None, 109 << 20)  # 10M rows: C2 pays back
    assert QUICK_COMPILER not in driver_java_options(None, None)


def test_the_deployments_own_options_come_first_and_keep_their_choice():
    assert driver_java_options("-Xss4m", None).startswith(f"-Xss4m {EXIT_ON_OOM}")
    for own in ("-XX:+UseG1GC", "-XX:+UseParallelGC", "-XX:TieredStopAtLevel=4", "-XX:-TieredCompilation"):
        chosen = driver_java_options(own, 1_000)
        assert chosen.startswith(own) and QUICK_COMPILER not in chosen, own
    assert "SharedArchiveFile" not in driver_java_options("-Xshare:off", 1_000)
    assert driver_java_options("-XX:SharedArchiveFile=/mine.jsa", None).count("SharedArchiveFile") == 1


def test_the_installed_archive_is_mapped_by_every_driver():
    archive = usable_archive()
    assert archive is not None, "make install builds it (python -m event_replay.class_archive)"
    assert f"-XX:SharedArchiveFile={archive}" in driver_java_options(None, None)
    assert f"-XX:SharedArchiveFile={archive}" in driver_java_options(None, 1_000)
