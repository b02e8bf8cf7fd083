"""Reliability (issue 7): every kind of bad row in one log, exact accounting, schema drift, empty vs missing
partitions, the commit journal, the output lock, and two concurrent `replay run` on one output."""
from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from pyspark.sql import Window
from pyspark.sql import functions as F

from event_replay.io.commit import JOURNAL, commit, recover, remove_orphan_staging
from event_replay.io.fs import LocalFs
from event_replay.io.lock import OutputLocked, lock_path, output_lock
from event_replay.semantics.config import parse_config

DATA = Path(__file__).resolve().parent / "fixtures"
REPLAY = str(Path(sys.executable).parent / "replay")
DAY = "2024-01-01"


def bad_rows_cfg(source, out, **extra):
    raw = {
        "source": {"path": str(source), "format": "csv", "splits": ["p0", "p1"]},
        "watermark": {"max_out_of_orderness": "1s", "interval": "200ms"},
        "window": {"type": "tumbling", "size": "10s"},
        "aggregations": {"cnt": "count(*)"},
        "replay": {"start": f"{DAY}T00:00:00Z", "end": f"{DAY}T01:00:00Z", "end_of_input": "flush"},
        "output": {"path": str(out)},
    }
    for k, v in extra.items():
        raw[k].update(v)
    return raw


def expected_rows():
    with open(DATA / "bad_rows.csv", newline="") as f:
        return list(csv.DictReader(f))


def held_by_windows(spark, windows_path) -> int:
    """Rows held by the windows, from the windows output alone: the count of each window's last firing."""
    w = spark.read.parquet(str(windows_path))
    last = Window.partitionBy("key", "window_start", "window_end").orderBy(F.col("fire_index").desc())
    return w.withColumn("rn", F.row_number().over(last)).filter("rn = 1").agg(F.sum("cnt")).first()[0] or 0


@pytest.mark.spark
def test_every_kind_of_bad_row_replays_with_exact_accounting(spark, tmp_path):
    from event_replay.job import run_replay

    src = tmp_path / "log"
    src.mkdir()
    shutil.copy(DATA / "bad_rows.csv", src / "bad_rows.csv")
    out = tmp_path / "out"
    summary = run_replay(spark, parse_config(bad_rows_cfg(src, out)))
    rows = expected_rows()
    expect = Counter(r["expect"] for r in rows)

    # Quarantine: the reason of every bad row, its original values (strings as read), one reason per row.
    q = spark.read.parquet(str(out / "quarantine"))
    assert q.columns == ["split", "offset", "arrival_time", "event_time", "key", "value", "expect", "reason"]
    got = [(r["value"], r["expect"], r["reason"]) for r in q.collect()]
    # The two exact copies at (p0, 2): one is kept, the other is a `duplicate_row`.
    assert sorted((v, e) for v, e, reason in got if e != reason) == []
    want = {r["value"]: r["expect"] for r in rows
            if r["expect"] not in ("ok", "late", "skipped", "duplicate_row")}
    assert {v: reason for v, _, reason in got if reason != "duplicate_row"} == want
    assert [reason for _, _, reason in got].count("duplicate_row") == 1
    row = q.filter(F.col("reason") == "bad_event_time").filter(F.col("value") == "17").first()
    assert (row["event_time"], row["arrival_time"]) == ("2024-13-45T00:00:00Z", "2024-01-01T00:00:10Z")

    # Late rows, windows, skipped: from the outputs, each counted independently.
    late = spark.read.parquet(str(out / "late_events"))
    assert sorted(r["value"] for r in late.collect()) == [r["value"] for r in rows if r["expect"] == "late"]
    in_windows = held_by_windows(spark, out / "windows")
    assert in_windows == expect["ok"] + 1  # + the kept copy of the exact duplicate

    counts = spark.read.parquet(str(out / "counts")).first().asDict()
    assert counts == {"rows_read": len(rows), "rows_in_windows": in_windows, "late_rows": expect["late"],
                      "quarantined_rows": q.count(), "skipped_rows": expect["skipped"]}
    # The accounting holds to the row: every row read is in exactly one place.
    assert counts["rows_read"] == in_windows + late.count() + q.count() + counts["skipped_rows"]
    assert (summary.rows_read, summary.quarantined_rows, summary.skipped_rows) == (len(rows), q.count(), 3)
    assert sorted(os.listdir(out)) == ["counts", "late_events", "quarantine", "watermarks", "windows"]


@pytest.mark.spark
def test_bad_rows_per_partition_counts(spark, tmp_path):
    """The same log as two day partitions (a second day in its own folder): per-partition counts add up, and
    the rows of dt=D whose arrival is not on D are skipped there (they belong to another day's replay)."""
    from event_replay.job import run_partition

    src = tmp_path / "log"
    (src / f"dt={DAY}").mkdir(parents=True)
    shutil.copy(DATA / "bad_rows.csv", src / f"dt={DAY}" / "part.csv")
    (src / "dt=2024-01-02").mkdir()
    (src / "dt=2024-01-02" / "part.csv").write_text(
        "split,offset,arrival_time,event_time,key,value,expect\n"
        "p0,40,2024-01-02T00:00:01Z,2024-01-02T00:00:01Z,k1,40,ok\n"
        "p1,40,2024-01-02T00:00:02Z,2024-01-02T00:00:02Z,k1,41,ok\n"
        "p1,41,2024-01-02T00:00:03Z,,k1,42,missing_event_time\n")
    out = tmp_path / "out"
    raw = bad_rows_cfg(src, out)
    raw["replay"] = {"end_of_input": "flush"}
    cfg = parse_config(raw)
    s1 = run_partition(spark, cfg, DAY, first=True)
    s2 = run_partition(spark, cfg, "2024-01-02", end_of_input="flush")
    c1 = spark.read.parquet(str(out / "counts" / f"dt={DAY}")).first().asDict()
    c2 = spark.read.parquet(str(out / "counts" / "dt=2024-01-02")).first().asDict()
    rows = expected_rows()
    # Day 1 is the range [00:00 Jan 1, 00:00 Jan 2): only the row arriving on Dec 31 is skipped. The two rows
    # that the one-hour replay above skipped (02:00, 02:00:01) are judged here: offset 28 arrives after offset
    # 30 of p0 (offset_out_of_order), the other has no event time. The pre-1970 arrivals are quarantined in
    # any range: no partition could ever replay them.
    assert c1 == {"rows_read": len(rows), "rows_in_windows": 10, "late_rows": 1, "quarantined_rows": 22,
                  "skipped_rows": 1}
    q1 = {r["value"]: r["reason"] for r in spark.read.parquet(str(out / "quarantine" / f"dt={DAY}")).collect()}
    assert (q1["28"], q1["29"]) == ("offset_out_of_order", "missing_event_time")
    assert c2 == {"rows_read": 3, "rows_in_windows": 2, "late_rows": 0, "quarantined_rows": 1, "skipped_rows": 0}
    for c in (c1, c2):
        assert c["rows_read"] == c["rows_in_windows"] + c["late_rows"] + c["quarantined_rows"] + c["skipped_rows"]
    assert (s1.rows_read, s2.rows_read) == (len(rows), 3)
    # Everything committed: no journal, staging or lock left.
    assert sorted(n for n in os.listdir(out) if n.startswith("_")) == ["_state"]


def _write(path: Path, table: dict, name="part-0.parquet"):
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(table), path / name)


def _rows(n0, n, value):
    return {"split": ["a"] * n, "offset": list(range(n0, n0 + n)),
            "arrival_time": [1_704_067_200_000 + 1000 * i for i in range(n0, n0 + n)],
            "event_time": [1_704_067_200_000 + 1000 * i for i in range(n0, n0 + n)], "key": ["k"] * n,
            "value": value(n)}


def _part_cfg(src, out):
    return parse_config({"source": {"path": str(src), "splits": ["a"]}, "watermark": {"max_out_of_orderness": "1s"},
                         "window": {"type": "tumbling", "size": "10s"}, "aggregations": {"cnt": "count(*)"},
                         "output": {"path": str(out)}})


@pytest.mark.spark
def test_schema_drift_is_refused_naming_the_file_and_partition(spark, tmp_path):
    from event_replay.job import run_partition, run_replay
    from event_replay.io.files import SchemaDriftError

    # Inside one dataset: two files disagree on `value`.
    flat = tmp_path / "flat"
    _write(flat, _rows(0, 3, lambda n: list(range(n))), "part-0.parquet")
    _write(flat, _rows(3, 3, lambda n: [str(i) for i in range(n)]), "part-1.parquet")
    out = tmp_path / "out"
    with pytest.raises(SchemaDriftError) as exc:
        run_replay(spark, _part_cfg(flat, out))
    assert exc.value.key == "source.path"
    assert "'value' is string in" in str(exc.value) and "part-1.parquet" in str(exc.value)
    assert not out.exists() or sorted(os.listdir(out)) == []  # nothing written, lock released

    # Between partitions: day 2 alone reads fine, but its `value` is not day 1's type.
    src = tmp_path / "parts"
    _write(src / "dt=2024-01-01", _rows(0, 3, lambda n: list(range(n))))
    _write(src / "dt=2024-01-02", _rows(86_400, 3, lambda n: [f"v{i}" for i in range(n)]))
    cfg = _part_cfg(src, out)
    run_partition(spark, cfg, "2024-01-01", first=True)
    with pytest.raises(SchemaDriftError) as exc:
        run_partition(spark, cfg, "2024-01-02")
    msg = str(exc.value)
    assert "partition dt=2024-01-02" in msg and "partition dt=2024-01-01" in msg and "'value'" in msg
    assert not (out / "windows" / "dt=2024-01-02").exists()


@pytest.mark.spark
def test_empty_and_missing_partitions(spark, tmp_path):
    from event_replay.job import run_partition
    from event_replay.io.source import MissingPartitionError

    src = tmp_path / "parts"
    _write(src / "dt=2024-01-01", _rows(0, 3, lambda n: list(range(n))))
    (src / "dt=2024-01-02").mkdir()  # empty: the export ran and found nothing
    _write(src / "dt=2024-01-04", _rows(3 * 86_400, 2, lambda n: list(range(n))))
    out = tmp_path / "out"
    cfg = _part_cfg(src, out)
    run_partition(spark, cfg, "2024-01-01", first=True)
    s2 = run_partition(spark, cfg, "2024-01-02")  # empty: a valid replay of no rows
    assert (s2.rows_read, s2.firings) == (0, 0)
    # Its outputs exist, with the columns of its neighbours (borrowed from day 1's files).
    late2 = spark.read.parquet(str(out / "late_events" / "dt=2024-01-02"))
    late1 = spark.read.parquet(str(out / "late_events" / "dt=2024-01-01"))
    assert late2.schema == late1.schema and late2.count() == 0
    assert (out / "_state" / "2024-01-02" / "manifest.json").exists()
    # Missing (no folder): refused, naming the partition; nothing written.
    with pytest.raises(MissingPartitionError) as exc:
        run_partition(spark, cfg, "2024-01-03")
    assert exc.value.key == "--partition" and "dt=2024-01-03" in str(exc.value) and "--allow-missing" in str(exc.value)
    assert not (out / "_state" / "2024-01-03").exists()
    # Allowed: it replays as empty, time passes and the state carries to day 4, whose windows then fire.
    s3 = run_partition(spark, cfg, "2024-01-03", allow_missing=True)
    assert s3.rows_read == 0
    s4 = run_partition(spark, cfg, "2024-01-04", end_of_input="flush")
    assert s4.rows_read == 2 and s4.rows_in_windows == 2
    m = json.loads((out / "_state" / "2024-01-04" / "manifest.json").read_text())
    assert m["previous"] == "2024-01-03"


# --- the commit journal, without Spark ------------------------------------------------------------------------

def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _stage(out: Path, version: str) -> tuple[str, list[tuple[str, str]]]:
    staging = out / f"_staging-{version}"
    moves = []
    for ds in ("windows", "counts", "_state/2024-01-02"):
        d = staging / ds
        d.mkdir(parents=True)
        (d / "part-0").write_text(f"{ds} {version}")
        dst = out / (f"{ds}/dt=2024-01-02" if not ds.startswith("_") else ds)
        moves.append((str(d), str(dst)))
    return str(staging), moves


def test_commit_journal_rolls_forward_from_any_point(tmp_path):
    fs = LocalFs()
    out = tmp_path / "out"
    out.mkdir()
    staging, moves = _stage(out, "old")
    commit(fs, str(out), staging, moves)
    old = _tree(out)
    assert sorted(old) == ["_state/2024-01-02/part-0", "counts/dt=2024-01-02/part-0", "windows/dt=2024-01-02/part-0"]
    staging, moves = _stage(out, "new")
    commit(fs, str(out), staging, moves)
    new = _tree(out)
    assert set(new.values()) == {"windows new", "counts new", "_state/2024-01-02 new"}

    # Interrupted after k renames (0..3) with the journal written: recover() gives the new outputs whole,
    # and running it again changes nothing.
    for k in range(len(moves) + 1):
        shutil.rmtree(out)
        out.mkdir()
        staging, moves = _stage(out, "old")
        commit(fs, str(out), staging, moves)
        staging, moves = _stage(out, "new")
        (out / JOURNAL).write_text(json.dumps({"format": 1, "staging": staging, "moves": [list(m) for m in moves]}))
        for src, dst in moves[:k]:
            shutil.rmtree(dst)
            os.rename(src, dst)
        if k == 1:  # a crash between deleting the previous folder and renaming the staged one
            shutil.rmtree(moves[1][1])
        assert recover(str(out), fs=fs) is not None
        assert _tree(out) == new
        assert recover(str(out), fs=fs) is None and _tree(out) == new

    # Died before the commit point: the staged folder is an orphan, the outputs are the previous ones.
    staging, moves = _stage(out, "newer")
    assert recover(str(out), fs=fs) is None
    assert remove_orphan_staging(str(out), fs=fs) == [Path(staging).name]
    assert _tree(out) == new


# --- the output lock ------------------------------------------------------------------------------------------

def test_output_lock(tmp_path):
    out = str(tmp_path / "out")
    with output_lock(out, args=["replay", "run", "A"]) as path:
        holder = json.loads(Path(path).read_text())
        assert holder["pid"] == os.getpid() and holder["args"] == ["replay", "run", "A"]
        with output_lock(out):  # re-entrant in the process holding it (the CLI, then the job)
            pass
        assert Path(path).exists()
    assert not Path(lock_path(out)).exists()

    # Released on failure too.
    with pytest.raises(RuntimeError):
        with output_lock(out):
            raise RuntimeError("the replay failed")
    assert not Path(lock_path(out)).exists()

    # Held by a live process: refused, naming it.
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        Path(lock_path(out)).write_text(json.dumps({"host": socket.gethostname(), "pid": sleeper.pid,
                                                    "started": "2024-01-01T00:00:00+00:00",
                                                    "args": ["replay", "run", "B"]}))
        with pytest.raises(OutputLocked) as exc:
            with output_lock(out):
                pass
        assert f"pid {sleeper.pid}" in str(exc.value) and "replay run B" in str(exc.value)
    finally:
        sleeper.kill()
        sleeper.wait()
    # The same lock once its process is dead: stale, broken, taken.
    with output_lock(out):
        assert json.loads(Path(lock_path(out)).read_text())["pid"] == os.getpid()
    # Another host's lock is never broken (its processes cannot be seen from here).
    Path(lock_path(out)).write_text(json.dumps({"host": "elsewhere", "pid": 1, "started": "x", "args": []}))
    with pytest.raises(OutputLocked, match="on elsewhere"):
        with output_lock(out):
            pass


# --- two concurrent runs, end to end ----------------------------------------------------------------------------

@pytest.mark.spark
def test_two_concurrent_runs_on_one_output(tmp_path):
    src = tmp_path / "log"
    src.mkdir()
    shutil.copy(DATA / "bad_rows.csv", src / "bad_rows.csv")
    out = tmp_path / "out"
    cfg = tmp_path / "job.yaml"
    cfg.write_text(yaml.safe_dump(bad_rows_cfg(src, out)))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    first = subprocess.Popen([REPLAY, "run", "--config", str(cfg), "--master", "local[1]"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not Path(lock_path(str(out))).exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # The second run is refused at once, before starting Spark, naming the holder.
        t0 = time.monotonic()
        second = subprocess.run([REPLAY, "run", "--config", str(cfg), "--master", "local[1]"], env=env,
                                capture_output=True, text=True, timeout=300)
        assert second.returncode == 1, second.stderr
        assert f"locked by pid {first.pid}" in second.stderr and "another replay of this job" in second.stderr
        assert time.monotonic() - t0 < 30
        stdout, stderr = first.communicate(timeout=900)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, stderr
    # The outputs are those of the one run: its summary line, every dataset, nothing left over.
    assert "rows read 34," in stdout and "quarantined rows 20," in stdout
    assert sorted(os.listdir(out)) == ["counts", "late_events", "quarantine", "watermarks", "windows"]
    counts = pq.read_table(out / "counts").to_pylist()
    assert counts == [{"rows_read": 34, "rows_in_windows": 10, "late_rows": 1, "quarantined_rows": 20,
                       "skipped_rows": 3}]


@pytest.mark.spark
def test_an_allowed_missing_hour_replays_exactly_as_one_replay_of_the_range(spark, tmp_path):
    """The missing hour is replayed as time passing: the splits go idle inside it (30 min after their last rows),
    so its watermarks output is not empty, and the three partitions together equal the reference model fed the
    whole range at once (tests/flink checks the reference against Flink). Continuing hour 2 straight from hour 0,
    or replaying hour 1 without its ticks, would put those idle changes elsewhere or nowhere."""
    from event_replay.job import run_partition
    from event_replay.semantics.model import LogRow
    from test_partitions import DAY0, H, _diff, _hourly_cfg, _ms, _norm, reference_outputs

    log, out = tmp_path / "log", tmp_path / "out"
    rows = []
    for h in (0, 2):  # hour 1 has no folder at all
        for i, split in enumerate(["p0", "p1"] * 4):
            a = DAY0 + h * H + H - 40_000 + i * 5_000
            rows.append(LogRow(split, h * 10 + i, a, a - (i % 3) * 700, "k" + str(i % 2), {"value": i}))
        part = [r for r in rows if DAY0 + h * H <= r.arrival_time < DAY0 + (h + 1) * H]
        _write(log / "dt=2024-01-01" / f"hour={h:02d}", {
            "split": [r.split for r in part], "offset": [r.offset for r in part],
            "arrival_time": [r.arrival_time for r in part], "event_time": [r.event_time for r in part],
            "key": [r.key for r in part], "value": [r.payload["value"] for r in part]})
    cfg = _hourly_cfg(log, out, idle_timeout=1_800_000)
    run_partition(spark, cfg, "2024-01-01T00", first=True)
    run_partition(spark, cfg, "2024-01-01T01", allow_missing=True)
    run_partition(spark, cfg, "2024-01-01T02", end_of_input="flush")

    def read(ds):
        return spark.read.option("recursiveFileLookup", "true").parquet(str(out / ds)).collect()

    firings = [(r.key, _ms(r.window_start), _ms(r.window_end), r.fire_index, _ms(r.fire_watermark), r.fire_reason,
                r.cnt, r.total) for r in read("windows")]
    late = [(r.split, r.offset, _ms(r.late_watermark)) for r in read("late_events")]
    wms = [(r.replay_time_ms, r.scope, r.split, None if r.idle else r.watermark_ms, r.idle) for r in read("watermarks")]
    _, whole = reference_outputs(rows, cfg, ["p0", "p1"], [DAY0, DAY0 + H, DAY0 + 2 * H, DAY0 + 3 * H])
    got = _norm(firings, late, wms)
    assert got == whole, _diff(got, whole)
    in_missing_hour = [w for w in wms if DAY0 + H <= w[0] < DAY0 + 2 * H]
    # Both splits, then the stream, went idle in hour 1.
    assert {(w[1], w[2]) for w in in_missing_hour if w[4]} == {("split", "p0"), ("split", "p1"), ("stream", None)}
