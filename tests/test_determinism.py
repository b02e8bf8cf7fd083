"""The output cannot depend on cores, shuffle partitions or the order of input files; every row is accounted for.

Two `replay run` subprocesses (local[1] with 1 shuffle partition on one copy of the log, local[2] with 7 on a
copy whose files are listed in another order) must write identical datasets; then the row accounting of
SEMANTICS §7: rows read = rows held by some window + late rows + quarantined rows (+ rows outside the range).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import yaml

from event_replay.samples.log import SampleSpec, write_sample
from event_replay.semantics.config import parse_config
from event_replay.semantics.model import LogRow

REPLAY = str(Path(sys.executable).parent / "replay")
DATASETS = ("windows", "late_events", "watermarks", "quarantine", "counts")
pytestmark = pytest.mark.spark
WINDOWS_FILES = 3

CONFIG = {
    "source": {"format": "parquet"},
    "watermark": {"strategy": "bounded_out_of_orderness", "max_out_of_orderness": "300ms", "emit": "periodic",
                  "interval": "200ms", "idle_timeout": "3s"},
    "window": {"type": "sliding", "size": "10s", "slide": "5s", "allowed_lateness": "1s"},
    "aggregations": {"cnt": "count(*)", "total": "sum(value)", "mx": "max(value)"},
    "replay": {"end_of_input": "flush"},
}


def _bad_rows(schema: pa.Schema, like: pa.Table) -> pa.Table:
    """Rows every replay must quarantine: null key, null event time, empty split, an offset repeated late."""
    first = like.slice(0, 1).to_pylist()[0]
    rows = []
    for change in ({"key": None, "offset": 10_000_001}, {"event_time": None, "offset": 10_000_002},
                   {"split": "", "offset": 10_000_003}, {"value": -1}):  # the last repeats (split, offset)
        r = dict(first)
        r.update(change)
        rows.append(r)
    # The duplicate arrives later than the original, so the original is the copy kept.
    rows[-1]["arrival_time"] = like.column("arrival_time")[like.num_rows - 1].as_py()
    return pa.Table.from_pylist(rows, schema=schema)


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("determinism")
    a = base / "log_a"
    write_sample(a, SampleSpec(rows=1500, splits=4, seed=3, rate=40, files=4, keys=5))
    table = pq.read_table(a)
    pq.write_table(_bad_rows(table.schema, table), a / "part-bad.parquet")
    # The same rows in files that list in another order (and one of them split in two).
    b = base / "log_b"
    b.mkdir()
    files = sorted(a.glob("*.parquet"))
    for i, f in enumerate(files):
        shutil.copy(f, b / f"{chr(ord('z') - i)}-{i}.parquet")
    t0 = pq.read_table(files[0])
    os.remove(b / "z-0.parquet")
    half = t0.num_rows // 2
    pq.write_table(t0.slice(0, half), b / "m-0.parquet")
    pq.write_table(t0.slice(half), b / "a-0.parquet")
    return a, b


def _start(log: Path, out: Path, master: str, shuffle: int) -> subprocess.Popen:
    # Several windows files: each must hold the same rows, in the same order, on both runs.
    raw = {**CONFIG, "source": {**CONFIG["source"], "path": str(log)},
           "output": {"path": str(out), "windows_files": WINDOWS_FILES}}
    cfg = out.parent / f"{out.name}.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    return subprocess.Popen([REPLAY, "run", "--config", str(cfg), "--master", master,
                             "--conf", f"spark.sql.shuffle.partitions={shuffle}",
                             "--conf", f"spark.default.parallelism={shuffle}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def canonical(table: pa.Table) -> pa.Table:
    """Sorted by every column: a total order, whatever order the writer chose."""
    return table.sort_by([(c, "ascending") for c in table.column_names])


@pytest.fixture(scope="module")
def outputs(logs, tmp_path_factory) -> tuple[Path, Path]:
    a, b = logs
    base = tmp_path_factory.mktemp("runs")
    out1, out2 = base / "one", base / "two"
    # Both at once: independent processes, and the JVM start-ups overlap.
    procs = [_start(a, out1, "local[1]", 1), _start(b, out2, "local[2]", 7)]
    try:
        for p in procs:
            _, err = p.communicate(timeout=1500)
            assert p.returncode == 0, err[-4000:]
    finally:
        for p in procs:  # ours only: never leave a JVM behind on a failure
            if p.poll() is None:
                p.kill()
                p.wait()
    return out1, out2


@pytest.mark.parametrize("name", DATASETS)
def test_outputs_identical_across_cores_partitions_and_file_order(outputs, name):
    out1, out2 = outputs
    t1, t2 = pq.read_table(out1 / name), pq.read_table(out2 / name)
    assert t1.schema == t2.schema
    c1, c2 = canonical(t1), canonical(t2)
    assert c1.num_rows == c2.num_rows
    assert c1.equals(c2), f"{name} differs"
    # The writer's own order is canonical too: the rows come out in the same order, not just the same set.
    assert t1.equals(t2), f"{name} rows are written in a different order"


def _files(dataset: Path) -> list[tuple[str, pa.Table]]:
    # part-NNNNN-<run uuid>-...: the part number is the file's identity across runs.
    return [(f.name.split("-")[1], pq.read_table(f)) for f in sorted(dataset.glob("part-*.parquet"))]


def test_windows_files_hold_the_same_rows_on_every_run(outputs):
    one, two = (_files(out / "windows") for out in outputs)
    assert 1 < len(one) <= WINDOWS_FILES
    assert [n for n, _ in one] == [n for n, _ in two]
    for (name, t1), (_, t2) in zip(one, two):
        assert t1.equals(t2), f"windows file {name} differs"
        keys = set(t1.column("key").to_pylist())
        assert all(keys.isdisjoint(t.column("key").to_pylist()) for n, t in one if n != name)  # a key, one file


def test_row_accounting(logs, outputs):
    a, _ = logs
    out = outputs[0]
    read = pq.read_table(a)
    counts = pq.read_table(out / "counts").to_pylist()[0]
    quarantine = pq.read_table(out / "quarantine")
    late = pq.read_table(out / "late_events")
    windows = pq.read_table(out / "windows").to_pandas()

    assert counts["rows_read"] == read.num_rows
    assert counts["quarantined_rows"] == quarantine.num_rows
    # The repeated (split, offset) arrives after higher offsets of its split: below the split's largest offset so
    # far, so out of order (docs/semantics.md: only a repeat of the largest offset is a duplicate).
    assert sorted(quarantine.column("reason").to_pylist()) == ["missing_event_time", "missing_key",
                                                               "missing_split", "offset_out_of_order"]
    assert pc.equal(quarantine.filter(pc.equal(quarantine["reason"], "offset_out_of_order"))["value"],
                    -1).to_pylist() == [True]
    assert counts["late_rows"] == late.num_rows
    assert counts["skipped_rows"] == 0  # no explicit range

    # Rows held by some window, from the windows output alone: each window's last firing holds all its rows.
    last = windows.sort_values("fire_index").groupby(["key", "window_start", "window_end"]).tail(1)
    held_pairs = int(last["cnt"].sum())  # (row, window) pairs
    not_late = counts["rows_read"] - counts["late_rows"] - counts["quarantined_rows"]
    per_row = 10 // 5  # sliding 10s/5s: a row is in 2 windows, and in at least one unless it is late
    assert not_late <= held_pairs <= per_row * not_late
    assert counts["rows_in_windows"] == not_late

    # Exactly, with the rows of each firing from the reference model on the same clean rows.
    from event_replay.semantics.reference import replay as reference_replay

    clean = read.to_pandas()
    bad = set(zip(quarantine["split"].to_pylist(), quarantine["offset"].to_pylist(), quarantine["value"].to_pylist()))
    clean = clean[[(s, o, v) not in bad for s, o, v in zip(clean["split"], clean["offset"], clean["value"])]]
    rows = [LogRow(split=s, offset=int(o), arrival_time=int(at.value // 1_000_000),
                   event_time=int(et.value // 1_000_000), key=k, payload={"value": int(v)})
            for s, o, at, et, k, v in zip(clean["split"], clean["offset"], clean["arrival_time"],
                                          clean["event_time"], clean["key"], clean["value"])]
    cfg = parse_config({**CONFIG, "source": {"path": str(a)}, "output": {"path": "unused"}})
    ref = reference_replay(rows, cfg)
    held = {r for f in ref.firings for r in f.rows}
    assert len(held) == counts["rows_in_windows"]
    assert len(held) + len(ref.late_rows) + counts["quarantined_rows"] == counts["rows_read"]
    assert sorted((lr.row.split, lr.row.offset) for lr in ref.late_rows) == \
        sorted(zip(late["split"].to_pylist(), late["offset"].to_pylist()))
    last_ref = {}
    for f in ref.firings:
        k = (f.key, f.window_start, f.window_end)
        if k not in last_ref or f.fire_index > last_ref[k].fire_index:
            last_ref[k] = f
    ref_pairs = sum(len(f.rows) for f in last_ref.values())
    assert ref_pairs == held_pairs
