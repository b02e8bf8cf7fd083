"""Duplicate and out-of-order offsets (io/offsets.py): the narrow pre-check only decides which splits need the
exact checks, so reading with it must quarantine exactly what the exact checks on every split quarantine.

Hundreds of small random splits (offset collisions, exact redeliveries, offsets going back, equal arrivals) are
read in one go: both checks partition by split, so each split is an independent case."""
from __future__ import annotations

import random

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from event_replay.io import read_source
from event_replay.io import offsets as offsets_mod
from source_logs import BASE, make_cfg, write_parquet

pytestmark = pytest.mark.spark


def _random_log(seed: int, n_splits: int) -> dict:
    rnd = random.Random(seed)
    rows = []
    for i in range(n_splits):
        split = f"s{i:04d}"
        kind = rnd.choice(["clean", "clean", "dup", "copy", "back", "mixed"])
        arrival, offset = BASE, rnd.randint(0, 3)
        for _ in range(rnd.randint(1, 7)):
            arrival += rnd.choice([0, 0, 1, 5])  # equal arrivals are common
            offset += rnd.randint(1, 3)
            rows.append([split, offset, arrival, arrival - rnd.randint(0, 50), rnd.choice("kq"), rnd.randint(0, 9)])
        extra = {"clean": 0, "dup": 1, "copy": 1, "back": 1, "mixed": 3}[kind]
        for _ in range(extra):
            base = [r for r in rows if r[0] == split]
            r = list(rnd.choice(base))
            what = kind if kind != "mixed" else rnd.choice(["dup", "copy", "back"])
            if what == "copy":
                pass  # an exact redelivery, maybe later
            elif what == "dup":
                r[4], r[5] = rnd.choice("kq"), r[5] + 1  # same offset, other content
            else:
                r[1] = max(0, r[1] - rnd.randint(0, 2))  # an offset not above an earlier one
            r[2] += rnd.choice([0, 1, 7])
            rows.append(r)
    rnd.shuffle(rows)  # the file order must not matter either
    cols = list(zip(*rows))
    return {"split": list(cols[0]), "offset": list(cols[1]), "arrival_time": list(cols[2]),
            "event_time": list(cols[3]), "key": list(cols[4]), "value": list(cols[5])}


def _outcome(spark, cfg):
    data = read_source(spark, cfg)
    try:
        clean = sorted(tuple(r) for r in data.rows.collect())
        quarantined = sorted(tuple(r) for r in data.quarantine.collect())
        return clean, quarantined, (data.rows_read, data.clean_rows, data.quarantined_rows, data.splits)
    finally:
        data.release()


@pytest.mark.parametrize("seed,collide", [(1, False), (2, True)])
def test_precheck_quarantines_exactly_what_the_exact_checks_do(spark, tmp_path, monkeypatch, seed, collide):
    """collide: the pre-check's split hash maps splits on 4 values, so most share a hash with another one."""
    table = _random_log(seed, n_splits=300)
    path = write_parquet(tmp_path / "log", table, pa.schema([
        ("split", pa.string()), ("offset", pa.int64()), ("arrival_time", pa.int64()), ("event_time", pa.int64()),
        ("key", pa.string()), ("value", pa.int64())]))
    cfg = make_cfg(path)
    if collide:
        monkeypatch.setattr(offsets_mod, "_split_hash", lambda s: F.pmod(F.xxhash64(s), F.lit(4)))
    fast = _outcome(spark, cfg)
    monkeypatch.setattr(offsets_mod, "_PRECHECK", False)
    exact = _outcome(spark, cfg)
    assert fast == exact
    clean, quarantined, counts = fast
    reasons = {q[-1] for q in quarantined}
    # The generated log holds every case, so the comparison above is not between two empty results.
    assert {"duplicate_row", "duplicate_offset", "offset_out_of_order"} <= reasons, reasons
    assert counts[0] == len(table["split"]) == len(clean) + len(quarantined)
    assert len(clean) > len(quarantined) > 0
