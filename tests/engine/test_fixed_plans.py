"""engine.fixed_plans: the replay's plan settings are set on the session, each unless the deployment set it."""
from __future__ import annotations

from event_replay import engine


class _Session:
    """What fixed_plans reads and writes of a SparkSession: the context's conf (deployment) and the session's."""

    def __init__(self, deployed: dict[str, str]):
        self.deployed, self.session = deployed, {}
        outer = self

        class Conf:
            def contains(self, key):
                return key in outer.deployed

            def set(self, key, value):
                outer.session[key] = value

        class Context:
            def getConf(self):
                return Conf()

        self.sparkContext, self.conf = Context(), Conf()


def test_every_setting_is_applied():
    s = _Session({})
    engine.fixed_plans(s)
    assert s.session == engine._PLAN_SETTINGS
    assert s.session["spark.sql.adaptive.enabled"] == "false"
    assert s.session["spark.sql.requireAllClusterKeysForCoPartition"] == "false"


def test_a_deployments_own_setting_is_kept():
    s = _Session({"spark.sql.adaptive.enabled": "true"})
    engine.fixed_plans(s)
    assert "spark.sql.adaptive.enabled" not in s.session
    assert set(s.session) == set(engine._PLAN_SETTINGS) - {"spark.sql.adaptive.enabled"}


def test_on_a_real_session(spark):
    engine.fixed_plans(spark)
    for key, value in engine._PLAN_SETTINGS.items():
        if not spark.sparkContext.getConf().contains(key):
            assert spark.conf.get(key) == value
