"""The whole Spark engine (timeline then windows) equals the reference model on generated logs."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings

from engine_harness import engine_outputs, first_difference, reference_outputs
from event_replay.semantics.reference import replay
from strategies import cases, random_case


def check(spark, case):
    declared = case.declared_splits if case.cfg.source.splits is not None else None
    expected = reference_outputs(replay(case.rows, case.cfg, declared_splits=declared), case.cfg)
    got = engine_outputs(spark, case.rows, case.cfg, declared)
    assert got == expected, f"seed {case.seed}: {first_difference(got, expected)}"


@pytest.mark.parametrize("seed", [3, 2024])
def test_fixed_seeds(spark, seed):
    check(spark, random_case(seed, max_rows=300, max_splits=8))


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=cases(max_rows=150))
def test_engine_equals_reference(spark, case):
    check(spark, case)


@pytest.mark.parametrize("window", [{"type": "tumbling", "size": 4000},
                                    {"type": "sliding", "size": 4000, "slide": 1000}])
def test_without_the_extensions_lookups(spark, monkeypatch, window):
    """Tumbling and sliding windows do not need the extension's jar: without it the driver's lookups (the rows'
    wm_before, the timer firings) are broadcast joins of numpy tables, with the same results."""
    from event_replay.engine import lookups
    from event_replay.engine.timeline import driver
    from event_replay.engine.windows import fire_lookup
    from strategies import config

    monkeypatch.setattr(lookups, "extension_class", lambda spark, name: None)
    joined = []
    for module, name in ((driver, "_tick_lookup"), (fire_lookup, "fire_table")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _f=original, _n=name: joined.append(_n) or _f(*a))
    case = random_case(7, max_rows=300, max_splits=5)
    cfg = config(window=window, watermark={"max_out_of_orderness": 700, "interval": 300},
                 aggregations={"cnt": "count(*)", "total": "sum(value)"})
    check(spark, dataclasses.replace(case, cfg=cfg))
    assert sorted(set(joined)) == ["_tick_lookup", "fire_table"]


@pytest.mark.parametrize("window", [{"type": "session", "gap": 1000, "allowed_lateness": 2000},
                                    {"type": "cumulate", "size": 4000, "step": 1000, "allowed_lateness": 1000},
                                    {"type": "sliding", "size": 2000, "slide": 1000, "time": "processing"}])
def test_keyless_windows_and_having(spark, window):
    """A windowing query without a key (`source.columns.key: null`: every row's key is null, one group per window)
    and a HAVING over the firings' columns: firings it drops keep their place in the fire indexes."""
    from event_replay.semantics.config import parse_config, to_raw

    case = random_case(11, max_rows=200, max_splits=4)
    raw = to_raw(case.cfg)
    raw["source"]["columns"]["key"] = None
    raw["window"] = window
    raw["aggregations"] = {"cnt": "count(*)", "total": "sum(value)"}
    raw["having"] = "cnt % 2 = 0"
    cfg = parse_config(raw)
    rows = tuple(dataclasses.replace(r, key=None) for r in case.rows)
    check(spark, dataclasses.replace(case, rows=rows, cfg=cfg))
    result = replay(rows, cfg, declared_splits=case.declared_splits if cfg.source.splits is not None else None)
    everything = replay(rows, dataclasses.replace(cfg, having=None),
                        declared_splits=case.declared_splits if cfg.source.splits is not None else None)
    assert 0 < len(result.firings) < len(everything.firings)  # HAVING dropped some firings, not all
    assert {f.key for f in everything.firings} == {None}
