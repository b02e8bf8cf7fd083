"""The driver's class archive (class_archive.py): built by make install for this Java, PySpark and class path,
mapped by a real driver JVM; another class path has none; building again keeps the one there is."""
from __future__ import annotations

import subprocess
import sys

from event_replay.class_archive import archive_path, build_archive, usable_archive

# -Xshare:on: the JVM refuses to start unless it maps the archives it is given (the JDK's and ours).
_SESSION = """
from event_replay.spark import build_session
spark = build_session(master="local[1]", conf={"spark.driver.extraJavaOptions": "-Xshare:on"})
print(spark.sparkContext.getConf().get("spark.driver.extraJavaOptions"))
print(spark.range(3).count())
"""


def test_a_driver_jvm_maps_the_installed_archive():
    archive = usable_archive()
    assert archive is not None and archive == archive_path()
    done = subprocess.run([sys.executable, "-c", _SESSION], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    options, count = done.stdout.strip().splitlines()[-2:]
    assert f"-XX:SharedArchiveFile={archive}" in options and count == "3"


def test_another_class_path_has_no_archive_and_a_built_one_is_kept(monkeypatch, tmp_path):
    archive = usable_archive()
    assert archive is not None
    built = archive.stat().st_mtime_ns
    assert build_archive() == archive and archive.stat().st_mtime_ns == built  # nothing rebuilt
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))  # the class path's first entry changes
    assert archive_path() != archive and usable_archive() is None
