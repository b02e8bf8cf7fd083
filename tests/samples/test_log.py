"""The sample event log (samples/log.py): deterministic for a spec and seed; offsets 0, 1, 2, ... per split in arrival
order; event times at or before arrival, a few stragglers far behind; the last split falls silent at 60 %; written
as N files (Parquet or CSV) or as dt=/hour= folders by arrival time, replacing the target folder."""
from __future__ import annotations

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from event_replay.samples.log import SampleSpec, generate, write_partitioned_sample, write_sample

SPEC = SampleSpec(rows=5000, splits=3, seed=5, keys=4, rate=50.0, straggler_fraction=0.02)


def ms(table, name):
    col = table.column(name)
    return col.cast("int64").to_pylist()


def test_deterministic_for_a_spec_and_seed():
    assert generate(SPEC).equals(generate(SPEC))
    assert not generate(SPEC).equals(generate(SampleSpec(**{**SPEC.__dict__, "seed": 6})))


def test_offsets_per_split_in_arrival_order_and_events_not_after_arrival():
    t = generate(SPEC)
    assert t.num_rows == 5000 and t.column_names == ["split", "offset", "arrival_time", "event_time", "key", "value"]
    arrival, event = ms(t, "arrival_time"), ms(t, "event_time")
    assert arrival == sorted(arrival) and arrival[0] >= 1_704_067_200_000
    assert all(e <= a for a, e in zip(arrival, event))
    per_split: dict[str, list[int]] = {}
    for s, o in zip(t.column("split").to_pylist(), t.column("offset").to_pylist()):
        per_split.setdefault(s, []).append(o)
    assert sorted(per_split) == ["p0", "p1", "p2"]
    assert all(offsets == list(range(len(offsets))) for offsets in per_split.values())
    late = sum(1 for a, e in zip(arrival, event) if a - e >= 5000)
    assert 50 <= late <= 150  # 2 % stragglers, 5-60 s behind
    assert set(t.column("key").to_pylist()) <= {"k00", "k01", "k02", "k03"}
    assert min(t.column("value").to_pylist()) >= 1 and max(t.column("value").to_pylist()) <= 100


def test_the_last_split_falls_silent():
    t = generate(SPEC)
    arrival, splits = ms(t, "arrival_time"), t.column("split").to_pylist()
    cut = arrival[0] + (arrival[-1] - arrival[0]) * 0.6
    assert max(a for a, s in zip(arrival, splits) if s == "p2") < cut + 1000
    assert max(a for a, s in zip(arrival, splits) if s == "p0") > cut + 10_000
    still = generate(SampleSpec(**{**SPEC.__dict__, "silent_split": False}))
    assert max(a for a, s in zip(ms(still, "arrival_time"), still.column("split").to_pylist()) if s == "p2") > \
        cut + 10_000


def test_epoch_ms_columns():
    t = generate(SampleSpec(rows=10, epoch_ms=True))
    assert str(t.schema.field("arrival_time").type) == "int64" and str(t.schema.field("event_time").type) == "int64"
    assert str(generate(SampleSpec(rows=10)).schema.field("arrival_time").type) == "timestamp[ms, tz=UTC]"


@pytest.mark.parametrize("bad", [{"rows": -1}, {"splits": 0}, {"keys": 0}, {"rate": 0.0}, {"files": 0}])
def test_a_spec_that_cannot_make_a_log_is_refused(bad):
    with pytest.raises(ValueError):
        generate(SampleSpec(**{"rows": 10, **bad}))


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_written_as_n_files_replacing_the_folder(tmp_path, fmt):
    out = tmp_path / "log"
    out.mkdir()
    (out / "stale.parquet").write_bytes(b"x")
    spec = SampleSpec(rows=1001, splits=2, files=3, format=fmt)
    assert write_sample(out, spec) == 1001
    files = sorted(p.name for p in out.iterdir())
    assert files == [f"part-{i:05d}.{fmt}" for i in range(3)]
    read = (lambda p: pq.read_table(p)) if fmt == "parquet" else (lambda p: pacsv.read_csv(p))
    parts = [read(out / f) for f in files]
    assert [p.num_rows for p in parts] == [333, 334, 334]
    assert [o for p in parts for o in p.column("offset").to_pylist()] == generate(spec).column("offset").to_pylist()


@pytest.mark.parametrize("granularity, folders", [
    ("day", ["dt=2024-01-01", "dt=2024-01-02"]),
    ("hour", ["dt=2024-01-01/hour=23", "dt=2024-01-02/hour=00"]),
])
def test_partitioned_by_arrival_time(tmp_path, granularity, folders):
    spec = SampleSpec(rows=720, rate=0.1, start="2024-01-01T23:00:00Z", splits=2)  # two hours over midnight
    assert write_partitioned_sample(tmp_path / "log", spec, granularity) == 720
    found = sorted(str(p.parent.relative_to(tmp_path / "log")) for p in (tmp_path / "log").rglob("part-00000.parquet"))
    assert found == folders
    total = 0
    for f in folders:
        part = pq.read_table(tmp_path / "log" / f / "part-00000.parquet")
        day, hour = f[3:13], (f[-2:] if granularity == "hour" else None)
        for a in part.column("arrival_time").to_pylist():
            assert a.strftime("%Y-%m-%d") == day and (hour is None or a.strftime("%H") == hour)
        total += part.num_rows
    assert total == 720
    with pytest.raises(ValueError, match="Parquet"):
        write_partitioned_sample(tmp_path / "csv", SampleSpec(rows=10, format="csv"), "day")
