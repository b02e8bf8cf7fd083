"""spark.py: build_session's machine-dependent default (few shuffle partitions on a local master only, whoever set
the master: --master, MASTER, spark-submit; never over a count somebody chose) and the `--conf` pairs."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from event_replay.spark import local_shuffle_partitions


class _Conf(dict):
    def contains(self, key):
        return key in self

    def set(self, key, value):
        self[key] = value


def _session(master: str, parallelism: int, context_conf: dict | None = None):
    sc = SimpleNamespace(master=master, defaultParallelism=parallelism,
                         getConf=lambda: _Conf(context_conf or {}))
    return SimpleNamespace(sparkContext=sc, conf=_Conf())


@pytest.mark.parametrize("master,parallelism,expected", [
    ("local[2]", 2, "4"), ("local[*]", 8, "16"), ("local", 1, "4"),
    ("spark://10.0.0.1:7077", 64, None), ("yarn", 100, None), ("k8s://https://api:6443", 32, None),
])
def test_local_masters_get_a_few_partitions_per_core(master, parallelism, expected):
    s = _session(master, parallelism)
    local_shuffle_partitions(s)
    assert s.conf.get("spark.sql.shuffle.partitions") == expected


def test_a_chosen_count_is_kept():
    s = _session("local[2]", 2, {"spark.sql.shuffle.partitions": "200"})  # e.g. spark-submit --conf
    local_shuffle_partitions(s)
    assert "spark.sql.shuffle.partitions" not in s.conf
    s = _session("local[2]", 2)
    local_shuffle_partitions(s, user_set=True)  # build_session(conf=...)
    assert "spark.sql.shuffle.partitions" not in s.conf


def test_the_driver_allocates_arrow_memory_from_the_c_allocator(monkeypatch):
    """Numpy and Arrow share one allocator on the driver (spark._driver_arrow_pool), unless the deployment chose
    Arrow's pool itself."""
    import pyarrow as pa

    from event_replay.spark import _driver_arrow_pool

    before = pa.default_memory_pool()
    try:
        monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
        pa.set_memory_pool(pa.mimalloc_memory_pool())  # pyarrow's default pool here
        _driver_arrow_pool()
        assert pa.default_memory_pool().backend_name == "system"
        monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")
        pa.set_memory_pool(pa.mimalloc_memory_pool())
        _driver_arrow_pool()
        assert pa.default_memory_pool().backend_name == "mimalloc"
    finally:
        pa.set_memory_pool(before)


def test_conf_pairs_split_at_the_first_equals_sign():
    from event_replay.semantics.config_keys import ConfigError
    from event_replay.spark import parse_conf

    assert parse_conf([" spark.a = 1 ", "spark.b=x=y", "spark.c="]) == {"spark.a": "1", "spark.b": "x=y",
                                                                         "spark.c": ""}
    for bad in ["spark.a", "=1"]:
        with pytest.raises(ConfigError) as err:
            parse_conf([bad])
        assert err.value.key == "--conf"
