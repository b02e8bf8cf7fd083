"""`replay run --partitions FROM..TO` (range_replay.py): one replay of the span, its outputs cut by partition,
committed per partition, resumable; the outputs of one-by-one `--partition` runs, and the last one's state.

Logs (built here and in test_partitions.py) put sessions, idle splits and late rows across the partition
boundaries, and leave a day missing; each range is checked equal (decoded content of every partition's datasets
and of the last partition's state) to the one-by-one runs, and equal to the reference model fed the whole range.
"""
from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from event_replay.io.partition_source import MissingPartitionError
from event_replay.layout import RANGE_PROGRESS_FILE
from event_replay.pipeline import PartitionSpan
from event_replay.history.partitions import Partition, parse_range, partition_ids
from event_replay.range_replay import run_range
from event_replay.semantics.config import parse_config
from event_replay.semantics.model import LogRow
from partition_cases import DAY0, H, diff, hourly_cfg, hourly_log, ms, norm, reference_outputs, run_partition

DAY = 86_400_000
DATASETS = ("windows", "late_events", "watermarks", "quarantine", "counts")


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
    t = pa.concat_tables([pq.read_table(f, partitioning=None) for f in files])  # no dt/hour columns
    return sorted((tuple(r.values()) for r in t.to_pylist()), key=repr)


def decoded(out: Path, ids: list[str], states: bool = True) -> dict:
    """Every partition's datasets, decoded, by partition; and the last one's carried state (manifest, rows),
    which is the only state a range writes (`states`: check that the others have none)."""
    got = {}
    for pid in ids:
        sub = Partition.parse(pid).subpath
        got[pid] = {ds: _rows(out / ds / sub) for ds in DATASETS}
        assert all(list((out / ds / sub).glob("*.parquet")) for ds in DATASETS), f"{pid}: a file in every dataset"
    state = out / "_state" / ids[-1]
    got[ids[-1]]["state"] = {"manifest": json.loads((state / "manifest.json").read_text()),
                             "splits": _rows(state / "splits"), "rows": _rows(state / "rows")}
    if states:
        assert not [p for p in ids[:-1] if (out / "_state" / p).exists()], "a range writes the last state only"
    return got


def one_by_one(spark, cfg, ids: list[str], *, first=True, allow_missing=False) -> None:
    for i, pid in enumerate(ids):
        run_partition(spark, cfg, pid, first=first and i == 0, allow_missing=allow_missing,
                      previous=ids[i - 1] if i else None,
                      end_of_input=cfg.replay.end_of_input if i == len(ids) - 1 else "hold")


def _with_output(cfg, out: Path):
    return dataclasses.replace(cfg, output=dataclasses.replace(cfg.output, path=str(out)))


def _request(ids, **kw) -> PartitionSpan:
    return PartitionSpan.between(**{"first_id": ids[0], "last_id": ids[-1], "first": True, "previous": None,
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
    assert lines[0].startswith("replay: 2024-01-01..2024-01-04 replayed as one span in ")
    assert [ln.split(": rows read")[0] for ln in lines[1:]] == \
        [f"replay: partition {i} of 4 {p}" + (" (missing: empty)" if i == 3 else "") for i, p in enumerate(ids, 1)]
    assert not (tmp_path / "range" / RANGE_PROGRESS_FILE).exists()
    assert not list((tmp_path / "range").glob("_staging-*")) and not (tmp_path / "range" / "_commit.json").exists()

    single = _with_output(cfg, tmp_path / "single")
    one_by_one(spark, single, ids, allow_missing=True)
    got, want = decoded(tmp_path / "range", ids), decoded(tmp_path / "single", ids, states=False)
    for pid in ids:
        assert got[pid] == want[pid], pid
    assert got["2024-01-04"]["state"]["manifest"]["flushed"] is True
    assert any(got[p]["late_events"] for p in ids[1:]), "the log must have late rows after the first day"
    assert (tmp_path / "single" / "_state" / "2024-01-02").is_dir()
    assert decoded(tmp_path / "single", ids[:2], states=False)["2024-01-02"]["state"]["rows"], \
        "a session must be open across a midnight"
    assert not any(got[p]["quarantine"] for p in ids), "every row of the log is clean"
    assert not got["2024-01-03"]["windows"] and not got["2024-01-03"]["late_events"]

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
    import event_replay.pipeline as commit_module  # where a range run's partitions are committed (io.commit.commit)

    log = tmp_path / "log"
    rows = hourly_log(log)  # test_partitions: p1 idle across the first boundary, stragglers, open windows
    ids = ["2024-01-01T00", "2024-01-01T01", "2024-01-01T02"]
    cfg = hourly_cfg(log, tmp_path / "range")
    real = commit_module.commit
    commits = []

    def crash_on_the_last(fs, output, staging, moves, **kw):
        commits.append(moves[0][1])
        if len(commits) == len(ids):
            raise Crash(moves[0][1])
        return real(fs, output, staging, moves, **kw)

    monkeypatch.setattr(commit_module, "commit", crash_on_the_last)
    with pytest.raises(Crash):
        run_range(spark, cfg, _request(ids))
    out = tmp_path / "range"
    assert (out / "windows" / "dt=2024-01-01" / "hour=01").is_dir()
    assert not (out / "windows" / "dt=2024-01-01" / "hour=02").exists()
    assert json.loads((out / RANGE_PROGRESS_FILE).read_text())["committed"] == ids[1]

    # The same request continues after T01 (the last commit): the span is replayed again, T02 alone committed.
    commits.clear()
    monkeypatch.setattr(commit_module, "commit", lambda *a, **kw: commits.append(a[3][0][1]) or real(*a, **kw))
    summary = run_range(spark, cfg, _request(ids))
    assert len(commits) == 1 and commits[0].endswith("hour=02")
    assert summary.resumed_after == ids[1] and summary.replayed == [ids[-1]]
    assert not (out / RANGE_PROGRESS_FILE).exists() and not list(out.glob("_staging-*"))

    single = _with_output(cfg, tmp_path / "single")
    one_by_one(spark, single, ids)
    assert decoded(out, ids) == decoded(tmp_path / "single", ids, states=False)
    _, whole = reference_outputs(rows, cfg, ["p0", "p1"], [DAY0 + h * 3_600_000 for h in range(4)])
    engine = _engine_outputs(spark, out)
    assert engine == whole, diff(engine, whole)

    # A range can continue a history too: T01..T02 after T00 over the one-by-one outputs, same outputs; T01's
    # state goes (a range writes its last one only), T00's stays.
    before = decoded(tmp_path / "single", ids, states=False)
    commits.clear()
    again = run_range(spark, single, _request(ids[1:], first=False, previous=ids[0]))
    assert again.resumed_after is None and len(commits) == 2
    assert decoded(tmp_path / "single", ids, states=False) == before
    assert (tmp_path / "single" / "_state" / ids[0]).is_dir()
    assert not (tmp_path / "single" / "_state" / ids[1]).exists()


def _messy_hours(log: Path) -> None:
    """hourly_log plus rows a partition's own read quarantines or skips: a redelivered copy of an hour-0 row in
    hour 1's folder (its arrival is hour 0's: skipped there), an offset going back across the cut, a row of an
    undeclared split, one without an event time."""
    rows = hourly_log(log)
    first = next(r for r in rows if r.split == "p0" and r.arrival_time < DAY0 + H)
    extra = {1: [first, LogRow("p0", first.offset, DAY0 + H + 5_000, DAY0 + H, "a", {"value": 1}),
                 LogRow("p9", 1, DAY0 + H + 6_000, DAY0 + H, "a", {"value": 2})],
             2: [LogRow("p1", 10_000, DAY0 + 3 * H - 1_000, None, "b", {"value": 3})]}  # after every p1 row
    for h, more in extra.items():
        _write_folder(log / "dt=2024-01-01" / f"hour={h:02d}", {
            "split": [r.split for r in more], "offset": [r.offset for r in more],
            "arrival_time": [r.arrival_time for r in more], "event_time": [r.event_time for r in more],
            "key": [r.key for r in more], "value": [r.payload["value"] for r in more]}, name="part-extra.parquet",
            types={"event_time": pa.int64()})


@pytest.mark.spark
@pytest.mark.parametrize("time", ["event", "processing"])
def test_quarantined_and_skipped_rows_stay_with_their_folder(spark, tmp_path, time):
    """Each partition's quarantine, counts and outputs are those of its own run, whatever the span read."""
    log = tmp_path / "log"
    _messy_hours(log)
    ids = ["2024-01-01T00", "2024-01-01T01", "2024-01-01T02"]
    cfg = hourly_cfg(log, tmp_path / "range")
    if time == "processing":
        cfg = dataclasses.replace(cfg, window=dataclasses.replace(cfg.window, time="processing"))
    run_range(spark, cfg, _request(ids), progress=lambda line: None)
    single = _with_output(cfg, tmp_path / "single")
    one_by_one(spark, single, ids)
    got, want = decoded(tmp_path / "range", ids), decoded(tmp_path / "single", ids, states=False)
    assert got == want
    reasons = {p: sorted(r[-1] for r in got[p]["quarantine"]) for p in ids}
    assert reasons == {ids[0]: [], ids[1]: ["offset_out_of_order", "undeclared_split"],
                       ids[2]: ["missing_event_time"] if time == "event" else []}
    skipped = {p: got[p]["counts"][0][-2] for p in ids}  # counts: ..., skipped_rows, filtered_rows
    assert skipped == {ids[0]: 0, ids[1]: 1, ids[2]: 0}
    assert any(got[p]["windows"] for p in ids[1:])


@pytest.mark.spark
def test_foreign_progress_starts_the_range_over(spark, tmp_path):
    log = tmp_path / "log"
    hourly_log(log)
    out = tmp_path / "out"
    out.mkdir()
    ids = ["2024-01-01T00", "2024-01-01T01"]
    (out / RANGE_PROGRESS_FILE).write_text(json.dumps({"request": {"first_id": "2023-01-01"}, "committed": ids[0]}))
    summary = run_range(spark, hourly_cfg(log, out), _request(ids), progress=lambda line: None)
    assert summary.resumed_after is None and summary.replayed == ids


def _write_folder(path: Path, table: dict, name: str = "part-0.parquet", types: dict | None = None) -> None:
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({k: pa.array(v, (types or {}).get(k)) for k, v in table.items()}), path / name)


@pytest.mark.spark
def test_an_allowed_missing_hour_replays_exactly_as_one_replay_of_the_range(spark, tmp_path):
    """The missing hour is replayed as time passing: the splits go idle inside it (30 min after their last rows),
    so its watermarks output is not empty, and the three partitions together equal the reference model fed the
    whole range at once (tests/flink checks the reference against Flink). Continuing hour 2 straight from hour 0,
    or replaying hour 1 without its ticks, would put those idle changes elsewhere or nowhere."""
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
