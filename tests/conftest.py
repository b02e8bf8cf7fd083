import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


@pytest.fixture(scope="session")
def spark():
    from event_replay.spark import build_session

    session = build_session(
        master=os.environ.get("TEST_SPARK_MASTER", "local[2]"),
        app_name="event-replay-tests",
        conf={"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2",
              "spark.driver.memory": "2g"},
    )
    yield session
    session.stop()
