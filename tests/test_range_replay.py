"""`replay run --partitions FROM..TO` (range_replay.py): one Spark application, the outputs and carried state of
one-by-one `--partition` runs, committed per partition, resumable.

Logs (built here and in test_partitions.py) put sessions, idle splits and late rows across the partition
boundaries, and leave a day missing; each range is checked equal (decoded content of every dataset and of the
state) to the one-by-one runs, and equal to the reference model fed the whole range.
"""
from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from event_replay.job import run_partition
from event_replay.io.partitions import Partition
from event_replay.io.source import MissingPartitionError
from event_replay.range_replay import PROGRESS, RangeRequest, parse_range, partition_ids, run_range
from event_replay.semantics.config import ConfigError, parse_config
from event_replay.semantics.model import LogRow
from partition_cases import DAY0, H, diff, hourly_cfg, hourly_log, ms, norm, reference_outputs

DAY = 86_400_000
DATASETS = ("windows", "late_events", "watermarks", "quarantine", "counts")


# --- the range itself (no Spark) --------------------------------------------------------------------------------

def test_partition_ids_of_days_and_hours():
    assert partition_ids(*parse_range("2024-02-27..2024-03-02")) == \
        ["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01", "2024-03-02"]
    assert partition_ids(*parse_range("2024-01-01T22..2024-01-02T01")) == \
        ["2024-01-01T22", "2024-01-01T23", "2024-01-02T00", "2024-01-02T01"]
    assert partition_ids(*parse_range("2024-01-05..2024-01-05")) == ["2024-01-05"]
    assert len(partition_ids(*parse_range("2023-01-01..2023-12-31"))) == 365


@pytest.mark.parametrize("text,why", [("2024-01-01", "FROM..TO"), ("2024-01-03..2024-01-01", "before"),
                                      ("2024-01-01..2024-01-02T03", "both"), ("2024-13-01..2024-12-31", "expected|month")])
def test_bad_ranges_are_refused(text, why):
    with pytest.raises(ConfigError, match=why):
        parse_range(text)


# --- equal to one-by-one runs ------------------------------------------------------------------------------------

def _daily_log(root: Path, days=(0, 1, 3)) -> list[LogRow]:
    """Days 2024-01-01.. with day 2 missing: sessions run across each midnight (rows in the last and the first
    minute), split p1 is silent (idle) through day 1, and some rows arrive 45 s or a whole day after their event."""
    rng = random.Random(5)
    drafts = []
    for d in days:
        base = DAY0 + d * DAY
        for split in ("p0", "p1"):
            for j in range(24):
                if split == "p1" and d == 1 and j >= 4:
                    continue  # silent from the start of day 1: goes idle
                # The first and the last two minutes of the day, and a little in the middle.
                a = base + (j * 5_000 if j < 8 else DAY - 120_000 + (j - 8) * 7_000 if j < 20 else
                            DAY // 2 + (j - 20) * 30_000) + rng.randint(0, 999)
                e = a - rng.choice([0, 200, 900, 45_000, 45_000, DAY if d else 0])
                drafts.append((split, a, e, rng.choice(["a", "b"]), rng.randint(0, 9)))
    # Offsets rise with arrival in each split, as a source delivers them (else the rows are quarantined).
    rows, off = [], {"p0": 0, "p1": 0}
    for split, a, e, key, value in sorted(drafts):
        off[split] += 1
        rows.append(LogRow(split, off[split], a, e, key, {"value": value}))
    table = pa.table({"split": [r.split for r in rows], "offset": [r.offset for r in rows],
                      "arrival_time": [r.arrival_time for r in rows], "event_time": [r.event_time for r in rows],
                      "key": [r.key for r in rows], "value": [r.payload["value"] for r in rows]})
    arrivals = table.column("arrival_time").to_pylist()
    for d in days:
        folder = root / Partition.parse(f"2024-01-0{d + 1}").subpath
        folder.mkdir(parents=True)
        mask = [DAY0 + d * DAY <= a < DAY0 + (d + 1) * DAY for a in arrivals]
        pq.write_table(table.filter(pa.array(mask)), folder / "part-00000.parquet")
    return rows


def _session_cfg(log: Path, out: Path):
    return parse_config({
        "source": {"path": str(log), "splits": ["p0", "p1"]},
        "watermark": {"emit": "periodic", "interval": 1000, "idle_timeout": 10_000, "max_out_of_orderness": 1000},
        "window": {"type": "session", "gap": 60_000, "allowed_lateness": 20_000},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
        "replay": {"end_of_input": "flush"}, "output": {"path": str(out)}})


def _rows(folder: Path) -> list[tuple]:
    files = sorted(f for f in folder.rglob("*.parquet") if not f.name.startswith(("_", ".")))
    if not files:
        return []
    t = pa.concat_tables([pq.read_table(f) for f in files])
    return sorted((tuple(r.values()) for r in t.to_pylist()), key=repr)


def decoded(out: Path, ids: list[str]) -> dict:
    """Every partition's datasets and carried state, decoded (rows, manifest), by partition."""
    got = {}
    for pid in ids:
        sub = Partition.parse(pid).subpath
        state = out / "_state" / pid
        got[pid] = {ds: _rows(out / ds / sub) for ds in DATASETS}
        got[pid]["state"] = {"manifest": json.loads((state / "manifest.json").read_text()),
                             "splits": _rows(state / "splits"), "rows": _rows(state / "rows")}
    return got


def one_by_one(spark, cfg, ids: list[str], *, first=True, allow_missing=False) -> None:
    for i, pid in enumerate(ids):
        run_partition(spark, cfg, pid, first=first and i == 0, allow_missing=allow_missing,
                      previous=ids[i - 1] if i else None,
                      end_of_input=cfg.replay.end_of_input if i == len(ids) - 1 else "hold")


def _with_output(cfg, out: Path):
    return dataclasses.replace(cfg, output=dataclasses.replace(cfg.output, path=str(out)))


def _request(ids, **kw) -> RangeRequest:
    return RangeRequest(**{"first_id": ids[0], "last_id": ids[-1], "first": True, "previous": None,
                           "end_of_input": "flush", "allow_missing": False, **kw})


def _engine_outputs(spark, out: Path, names=("cnt", "total")) -> dict:
    """The outputs of every partition together, as test_partitions compares them with the reference."""
    read = spark.read.option("recursiveFileLookup", "true")
    firings = [(r.key, ms(r.window_start), ms(r.window_end), r.fire_index, ms(r.fire_watermark), r.fire_reason,
                *(r[n] for n in names)) for r in read.parquet(str(out / "windows")).collect()]
    late = [(r.split, r.offset, ms(r.late_watermark)) for r in read.parquet(str(out / "late_events")).collect()]
    wms = [(r.replay_time_ms, r.scope, r.split, None if r.idle else r.watermark_ms, r.idle)
           for r in read.parquet(str(out / "watermarks")).collect()]
    return norm(firings, late, wms)


@pytest.mark.spark
@pytest.mark.integration
def test_daily_range_with_sessions_and_a_missing_day_equals_one_by_one(spark, tmp_path):
    log = tmp_path / "log"
    rows = _daily_log(log)
    ids = partition_ids(*parse_range("2024-01-01..2024-01-04"))
    cfg = _session_cfg(log, tmp_path / "range")

    # Without --allow-missing the gap is refused before any partition runs.
    with pytest.raises(MissingPartitionError, match="2024-01-03"):
        run_range(spark, cfg, _request(ids))
    assert not (tmp_path / "range" / "windows").exists()

    lines = []
    summary = run_range(spark, cfg, _request(ids, allow_missing=True), progress=lines.append)
    assert summary.replayed == ids and summary.totals.rows_read == len(rows)
    assert [ln.split(": rows read")[0] for ln in lines] == \
        [f"replay: partition {i} of 4 {p}" + (" (missing: empty)" if i == 3 else "") for i, p in enumerate(ids, 1)]
    assert not (tmp_path / "range" / PROGRESS).exists()

    single = _with_output(cfg, tmp_path / "single")
    one_by_one(spark, single, ids, allow_missing=True)
    got, want = decoded(tmp_path / "range", ids), decoded(tmp_path / "single", ids)
    for pid in ids:
        assert got[pid] == want[pid], pid
    assert got["2024-01-04"]["state"]["manifest"]["flushed"] is True
    assert any(got[p]["late_events"] for p in ids[1:]), "the log must have late rows after the first day"
    assert got["2024-01-02"]["state"]["rows"], "a session must be open across a midnight"
    assert not any(got[p]["quarantine"] for p in ids), "every row of the log is clean"

    # And both equal the reference model fed the whole range at once.
    bounds = [DAY0 + d * DAY for d in range(5)]
    _, whole = reference_outputs(rows, cfg, ["p0", "p1"], bounds)
    engine = _engine_outputs(spark, tmp_path / "range")
    assert engine == whole, diff(engine, whole)


class Crash(RuntimeError):
    pass


@pytest.mark.spark
@pytest.mark.integration
def test_hourly_range_crash_resumes_after_the_last_commit(spark, tmp_path, monkeypatch):
    import event_replay.job as job

    log = tmp_path / "log"
    rows = hourly_log(log)  # test_partitions: p1 idle across the first boundary, stragglers, open windows
    ids = ["2024-01-01T00", "2024-01-01T01", "2024-01-01T02"]
    cfg = hourly_cfg(log, tmp_path / "range")
    real = job.run_partition
    calls = []

    def crash_on_the_last(spark_, cfg_, pid, **kw):
        calls.append(pid)
        if pid == ids[-1]:
            raise Crash(pid)
        return real(spark_, cfg_, pid, **kw)

    monkeypatch.setattr(job, "run_partition", crash_on_the_last)
    with pytest.raises(Crash):
        run_range(spark, cfg, _request(ids))
    assert (tmp_path / "range" / "_state" / ids[1] / "manifest.json").is_file()
    assert json.loads((tmp_path / "range" / PROGRESS).read_text())["committed"] == ids[1]

    # The same request continues after T01 (the last commit).
    calls.clear()
    monkeypatch.setattr(job, "run_partition", lambda *a, **kw: calls.append(a[2]) or real(*a, **kw))
    summary = run_range(spark, cfg, _request(ids))
    assert calls == [ids[-1]] and summary.resumed_after == ids[1] and summary.replayed == [ids[-1]]
    assert not (tmp_path / "range" / PROGRESS).exists()

    single = _with_output(cfg, tmp_path / "single")
    one_by_one(spark, single, ids)
    assert decoded(tmp_path / "range", ids) == decoded(tmp_path / "single", ids)
    _, whole = reference_outputs(rows, cfg, ["p0", "p1"], [DAY0 + h * 3_600_000 for h in range(4)])
    engine = _engine_outputs(spark, tmp_path / "range")
    assert engine == whole, diff(engine, whole)

    # A range can continue a history too: T01..T02 after T00, rerun over the same outputs, same result.
    calls.clear()
    again = run_range(spark, cfg, _request(ids[1:], first=False, previous=ids[0]))
    assert again.resumed_after is None and calls == ids[1:]
    assert decoded(tmp_path / "range", ids) == decoded(tmp_path / "single", ids)


@pytest.mark.spark
def test_foreign_progress_starts_the_range_over(spark, tmp_path):
    log = tmp_path / "log"
    hourly_log(log)
    out = tmp_path / "out"
    out.mkdir()
    ids = ["2024-01-01T00", "2024-01-01T01"]
    (out / PROGRESS).write_text(json.dumps({"request": {"first_id": "2023-01-01"}, "committed": ids[0]}))
    summary = run_range(spark, hourly_cfg(log, out), _request(ids), progress=lambda line: None)
    assert summary.resumed_after is None and summary.replayed == ids


def _write_folder(path: Path, table: dict) -> None:
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(table), path / "part-0.parquet")


@pytest.mark.spark
def test_an_allowed_missing_hour_replays_exactly_as_one_replay_of_the_range(spark, tmp_path):
    """The missing hour is replayed as time passing: the splits go idle inside it (30 min after their last rows),
    so its watermarks output is not empty, and the three partitions together equal the reference model fed the
    whole range at once (tests/flink checks the reference against Flink). Continuing hour 2 straight from hour 0,
    or replaying hour 1 without its ticks, would put those idle changes elsewhere or nowhere."""
    from event_replay.job import run_partition
    from event_replay.semantics.model import LogRow

    log, out = tmp_path / "log", tmp_path / "out"
    rows = []
    for h in (0, 2):  # hour 1 has no folder at all
        for i, split in enumerate(["p0", "p1"] * 4):
            a = DAY0 + h * H + H - 40_000 + i * 5_000
            rows.append(LogRow(split, h * 10 + i, a, a - (i % 3) * 700, "k" + str(i % 2), {"value": i}))
        part = [r for r in rows if DAY0 + h * H <= r.arrival_time < DAY0 + (h + 1) * H]
        _write_folder(log / "dt=2024-01-01" / f"hour={h:02d}", {
            "split": [r.split for r in part], "offset": [r.offset for r in part],
            "arrival_time": [r.arrival_time for r in part], "event_time": [r.event_time for r in part],
            "key": [r.key for r in part], "value": [r.payload["value"] for r in part]})
    cfg = hourly_cfg(log, out, idle_timeout=1_800_000)
    run_partition(spark, cfg, "2024-01-01T00", first=True)
    run_partition(spark, cfg, "2024-01-01T01", allow_missing=True)
    run_partition(spark, cfg, "2024-01-01T02", end_of_input="flush")

    def read(ds):
        return spark.read.option("recursiveFileLookup", "true").parquet(str(out / ds)).collect()

    firings = [(r.key, ms(r.window_start), ms(r.window_end), r.fire_index, ms(r.fire_watermark), r.fire_reason,
                r.cnt, r.total) for r in read("windows")]
    late = [(r.split, r.offset, ms(r.late_watermark)) for r in read("late_events")]
    wms = [(r.replay_time_ms, r.scope, r.split, None if r.idle else r.watermark_ms, r.idle) for r in read("watermarks")]
    _, whole = reference_outputs(rows, cfg, ["p0", "p1"], [DAY0, DAY0 + H, DAY0 + 2 * H, DAY0 + 3 * H])
    got = norm(firings, late, wms)
    assert got == whole, diff(got, whole)
    in_missing_hour = [w for w in wms if DAY0 + H <= w[0] < DAY0 + 2 * H]
    # Both splits, then the stream, went idle in hour 1.
    assert {(w[1], w[2]) for w in in_missing_hour if w[4]} == {("split", "p0"), ("split", "p1"), ("stream", None)}
