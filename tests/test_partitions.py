"""Partition-by-partition replay with carried state (SEMANTICS §6 `hold`): the invariant, tested.

Replaying P1..Pn one by one, each continuing from the state its predecessor wrote to disk, must give exactly the
outputs of one replay of P1..Pn: here checked against the reference model (a `Replayer` fed the same ranges, which
tests/flink checks against Flink, and which must equal one replay of the whole range). Then the CLI path on an
hourly `dt=/hour=` layout: outputs per partition, byte-identical reruns, clear failures on missing or mismatched
predecessor state.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import random
from pathlib import Path

import pytest

from event_replay.history.state_files import read_state
from event_replay.history.state import StateError
from event_replay.history.partitions import Partition
from event_replay.semantics.config import parse_config
from event_replay.semantics.model import LogRow
from partition_cases import (DAY0, H, diff, engine_partitioned, hourly_cfg, hourly_log, ms, norm, reference_outputs,
                             run_partition)
from strategies import random_case

pytestmark = [pytest.mark.spark, pytest.mark.integration]

# Configs that make windows, late rows and idle splits straddle the cuts; the log comes from strategies.py.
CONFIGS = {
    "periodic_tumbling_idle": {"watermark": {"emit": "periodic", "interval": 200, "idle_timeout": 400,
                                             "max_out_of_orderness": 200},
                               "window": {"type": "tumbling", "size": 2000, "allowed_lateness": 2000}},
    "periodic_sliding_silence": {"watermark": {"emit": "periodic", "interval": 100, "idle_timeout": 1000,
                                               "advance_after_silence": 300, "max_out_of_orderness": 1000},
                                 "window": {"type": "sliding", "size": 2000, "slide": 500, "allowed_lateness": 500}},
    "periodic_session": {"watermark": {"emit": "periodic", "interval": 200, "idle_timeout": 1000,
                                       "max_out_of_orderness": 200},
                         "window": {"type": "session", "gap": 1000, "allowed_lateness": 2000}},
    "per_event_tumbling": {"watermark": {"emit": "per_event", "strategy": "sql", "max_out_of_orderness": 200},
                           "window": {"type": "tumbling", "size": 1000, "allowed_lateness": 500}},
}


def make_case(name: str, seed: int):
    case = random_case(seed, max_rows=60, max_splits=3, max_keys=3)
    raw = {"source": {"path": "unused", "splits": list(case.declared_splits)},
           "watermark": CONFIGS[name]["watermark"], "window": CONFIGS[name]["window"],
           "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
           "replay": {"end_of_input": "flush" if seed % 2 else "hold"}, "output": {"path": "unused"}}
    rows = [r for r in case.rows]
    if not rows:
        rows = [LogRow("p0", 1, 1000, 900, "k0", {"value": 1})]
    cfg = parse_config(raw)
    start = min(r.arrival_time for r in rows)
    end = max(r.arrival_time for r in rows) + 1
    rng = random.Random(seed)
    interval = cfg.watermark.interval_ms or 1
    # Two cuts, each partition longer than one interval: at a row's arrival (ties both sides), on a tick, anywhere.
    cuts: set[int] = set()
    for _ in range(2):
        c = rng.choice([rng.choice(rows).arrival_time, (rng.randint(start, end) // interval) * interval,
                        rng.randint(start, end)])
        cuts.add(c)
    bounds = [start]
    for c in sorted(cuts):
        if c - bounds[-1] > interval and end - c > interval:
            bounds.append(c)
    bounds.append(max(end, bounds[-1] + interval + 1))
    splits = sorted(set(case.declared_splits) | {r.split for r in rows})
    return rows, cfg, splits, bounds


@pytest.mark.parametrize("name,seed", [("periodic_tumbling_idle", 3), ("periodic_sliding_silence", 8),
                                       ("periodic_session", 5), ("per_event_tumbling", 12)])
def test_partition_by_partition_equals_one_replay(spark, tmp_path, name, seed):
    rows, cfg, splits, bounds = make_case(name, seed)
    cfg = dataclasses.replace(cfg, output=dataclasses.replace(cfg.output, path=str(tmp_path / "out")))
    partitioned_ref, whole_ref = reference_outputs(rows, cfg, splits, bounds)
    assert partitioned_ref == whole_ref, "the reference itself must not depend on the cuts"
    got = engine_partitioned(spark, rows, cfg, splits, bounds)
    assert got == whole_ref, f"bounds {bounds}: {diff(got, whole_ref)}"


def test_partition_by_partition_without_the_extensions_lookups(spark, tmp_path, monkeypatch):
    """Without the extension's jar (engine/lookups.py), a tumbling replay joins the driver's tables by broadcast:
    the fire table then also spans the carried rows' event times, with the same outputs."""
    from event_replay.engine import lookups
    from event_replay.engine.windows import fire_lookup

    monkeypatch.setattr(lookups, "extension_class", lambda spark, name: None)
    tables = []
    monkeypatch.setattr(fire_lookup, "fire_table", lambda *a, _f=fire_lookup.fire_table: tables.append(1) or _f(*a))
    test_partition_by_partition_equals_one_replay(spark, tmp_path, "periodic_tumbling_idle", 3)
    assert len(tables) > 1  # one per partition


@pytest.mark.parametrize("written_by", ["aggregate", "read"])
def test_partition_by_partition_in_chunks_of_ticks(spark, tmp_path, monkeypatch, written_by):
    """Timelines computed on the driver a few ticks at a time (engine/timeline/driver_chunks.py): the carried
    state enters the first chunk and the last chunk's state is carried on, with the same outputs. The bucketed
    entries come from an aggregate of the rows, or from the read-order pass past its bound (io/read_order.py)."""
    from event_replay.engine.timeline import tick_table
    from event_replay import engine
    from event_replay.io import read_order, tick_buckets
    from timeline_cases import read_partials
    periodic = importlib.import_module("event_replay.engine.timeline.periodic")

    monkeypatch.setattr(tick_table, "DRIVER_GROUPS_MAX", 1)  # the case has one split: a tick per chunk
    monkeypatch.setattr(tick_buckets, "N_TICK_BUCKETS", 1 << 20)
    if written_by == "read":  # engine_partitioned reads no files: each partition's rows get the read's records
        # in one read partition, so that an entry is a (split, tick) group and a tick per chunk fits the bound
        monkeypatch.setattr(read_order, "tick_partials_max", lambda spark: 1)
        real = engine.replay
        monkeypatch.setattr(engine, "replay", lambda spark, df, cfg, *a: real(
            spark, df, cfg, *a, tick_partials=read_partials(df, cfg.watermark.interval_ms, partitions=1)))
    chunks, sources = [], []
    monkeypatch.setattr(periodic, "periodic_in_chunks", lambda rows, cfg, c, *a, _f=periodic.periodic_in_chunks:
                        chunks.append(len(c.chunks)) or _f(rows, cfg, c, *a))
    monkeypatch.setattr(periodic, "plan_chunks", lambda rows, splits, ticks, written, _f=periodic.plan_chunks:
                        sources.append(written is not None) or _f(rows, splits, ticks, written))
    test_partition_by_partition_equals_one_replay(spark, tmp_path, "periodic_tumbling_idle", 3)
    assert len(chunks) > 1 and max(chunks) > 1  # several partitions, each in several chunks
    assert set(sources) == {written_by == "read"}


# --- the CLI path: hourly dt=/hour= partitions on disk --------------------------------------------------------

def _partition_digests(out: Path, sub: str) -> dict[str, list[str]]:
    d = {}
    for ds in ("windows", "late_events", "watermarks", "quarantine", "counts"):
        files = sorted((out / ds / sub).glob("*.parquet"))
        d[ds] = [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]
    return d


def test_hourly_partitions_cli_path(spark, tmp_path):

    log, out = tmp_path / "log", tmp_path / "out"
    rows = hourly_log(log)
    cfg = hourly_cfg(log, out)
    ids = ["2024-01-01T00", "2024-01-01T01", "2024-01-01T02"]

    with pytest.raises(StateError, match="no predecessor"):
        run_partition(spark, cfg, ids[0])
    run_partition(spark, cfg, ids[0], first=True)
    with pytest.raises(StateError, match="no carried state"):
        run_partition(spark, cfg, ids[2])  # its predecessor T01 has not run
    run_partition(spark, cfg, ids[1])
    run_partition(spark, cfg, ids[2], end_of_input="flush")
    subs = [Partition.parse(i).subpath for i in ids]
    assert (out / "_state" / ids[1] / "manifest.json").is_file()

    # Byte-identical rerun of the middle partition (same predecessor state), nothing duplicated.
    before = _partition_digests(out, subs[1])
    assert all(before.values())
    run_partition(spark, cfg, ids[1])
    assert _partition_digests(out, subs[1]) == before

    # The outputs, read back per partition, equal the reference fed the same hours.
    names = ["cnt", "total"]
    fr = spark.read.option("recursiveFileLookup", "true").parquet(str(out / "windows")).collect()
    firings = [(r.key, ms(r.window_start), ms(r.window_end), r.fire_index, ms(r.fire_watermark), r.fire_reason,
                *(r[n] for n in names)) for r in fr]
    lr = spark.read.option("recursiveFileLookup", "true").parquet(str(out / "late_events")).collect()
    late = [(r.split, r.offset, ms(r.late_watermark)) for r in lr]
    wr = spark.read.option("recursiveFileLookup", "true").parquet(str(out / "watermarks")).collect()
    wms = [(r.replay_time_ms, r.scope, r.split, None if r.idle else r.watermark_ms, r.idle) for r in wr]
    bounds = [DAY0, DAY0 + H, DAY0 + 2 * H, DAY0 + 3 * H]
    _, whole = reference_outputs(rows, cfg, ["p0", "p1"], bounds)
    got = norm(firings, late, wms)
    assert got == whole, diff(got, whole)

    # A changed config (window size) refuses the carried state instead of continuing from it.
    other = dataclasses.replace(cfg, window=dataclasses.replace(cfg.window, size_ms=30_000))
    with pytest.raises(StateError, match="another config"):
        run_partition(spark, other, ids[2])
    # A flushed partition ends its history.
    with pytest.raises(StateError, match="flush"):
        read_state(spark, cfg, Partition.parse("2024-01-01T03"))
