"""Bad configs and bad inputs, fuzzed (issue 32, item 5): `replay run` driven with random configs over random source
folders (missing columns, wrong types, files without rows, empty files, mixed schemas, CSV among Parquet).

Every outcome must be one of:
- exit 0, with every dataset written and the row accounting holding;
- exit 2, with one line naming the key to fix (`replay: config error: key '...'`);
- exit 1, with one line of its own (`replay: ...`);
never a traceback, never a hang (a timeout fails the example), never a partial output: after a failure the output
folder holds no dataset, no staging folder and no lock.

Two levels, because each replay starts a JVM:
- without Spark, in-process, many examples: `replay run` up to the point where it would start Spark (a tripwire in
  place of the session); everything refused before then must be exit 2 naming a key;
- with Spark, a subprocess per example, under `-m slow`: 2 derandomized examples, and 40 not derandomized.
"""
from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from event_replay.orchestration.failures import is_progress

REPLAY = str(Path(sys.executable).parent / "replay")
ROLES = ("split", "offset", "arrival_time", "event_time", "key")
DATASETS = ("windows", "late_events", "watermarks", "quarantine", "counts")
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


# --- random source folders --------------------------------------------------------------------------------------

def _column(role: str, kind: str, n: int, rng) -> pa.Array:
    """A role's column of n rows, of a sound type ('good') or a wrong one."""
    arrivals = sorted(T0 + rng.randrange(0, 60_000) for _ in range(n))
    if role in ("arrival_time", "event_time"):
        ms = arrivals if role == "arrival_time" else [a - rng.randrange(0, 3000) for a in arrivals]
        return {"good": pa.array(ms, pa.timestamp("ms", tz="UTC")), "ms": pa.array(ms, pa.int64()),
                "text": pa.array([f"2024-01-01T00:00:{(m - T0) // 1000 % 60:02d}Z" for m in ms]),
                "bool": pa.array([m % 2 == 0 for m in ms]), "double": pa.array([m / 7 for m in ms]),
                "list": pa.array([[m] for m in ms]), "garbage": pa.array(["soon"] * n)}[kind]
    if role == "offset":
        return {"good": pa.array(range(n), pa.int64()), "text": pa.array([str(i) for i in range(n)]),
                "garbage": pa.array(["x"] * n), "double": pa.array([i + 0.5 for i in range(n)]),
                "bool": pa.array([True] * n), "list": pa.array([[i] for i in range(n)])}[kind]
    if role == "split":
        return {"good": pa.array([f"p{i % 2}" for i in range(n)]), "int": pa.array([i % 2 for i in range(n)]),
                "null": pa.array([None] * n, pa.string())}[kind]
    return {"good": pa.array([f"k{i % 3}" for i in range(n)]), "int": pa.array([i % 3 for i in range(n)]),
            "null": pa.array([None] * n, pa.string())}[kind]


KINDS = {"arrival_time": ["good", "ms", "text", "bool", "double", "list", "garbage"],
         "event_time": ["good", "ms", "text", "bool", "double", "list", "garbage"],
         "offset": ["good", "text", "garbage", "double", "bool", "list"],
         "split": ["good", "int", "null"], "key": ["good", "int", "null"]}


@st.composite
def source_files(draw):
    """A list of (file name, what to write): a table (with a format) or raw bytes."""
    import random

    files = []
    for i in range(draw(st.integers(1, 3))):
        shape = draw(st.sampled_from(["good", "good", "missing_column", "wrong_type", "no_rows", "empty_file",
                                      "csv", "extra_column"]))
        rng = random.Random(draw(st.integers(0, 2**16)))
        n = 0 if shape == "no_rows" else draw(st.integers(1, 25))
        kinds = {r: "good" for r in ROLES}
        if shape == "wrong_type":
            role = draw(st.sampled_from(ROLES))
            kinds[role] = draw(st.sampled_from(KINDS[role][1:]))
        cols = {r: _column(r, kinds[r], n, rng) for r in ROLES}
        cols["value"] = pa.array([rng.randrange(0, 100) for _ in range(n)], pa.int64())
        if shape == "missing_column":
            del cols[draw(st.sampled_from(ROLES + ("value",)))]
        if shape == "extra_column":
            cols["payload"] = pa.array([str(i) for i in range(n)])
        if shape == "empty_file":
            files.append((f"part-{i}.parquet", b""))
        elif shape == "csv":
            files.append((f"part-{i}.csv", pa.table(cols)))
        else:
            files.append((f"part-{i}.parquet", pa.table(cols)))
    return files


def write_source(root: Path, files) -> None:
    root.mkdir(parents=True)
    for name, what in files:
        if isinstance(what, bytes):
            (root / name).write_bytes(what)
        elif name.endswith(".csv"):
            pacsv.write_csv(what, root / name)
        else:
            pq.write_table(what, root / name)


# --- random configs ---------------------------------------------------------------------------------------------

def base_config(source: Path, out: Path) -> dict:
    return {"source": {"path": str(source), "splits": ["p0", "p1"]},
            "watermark": {"max_out_of_orderness": "500ms", "interval": "200ms", "idle_timeout": "5s"},
            "window": {"type": "tumbling", "size": "10s", "allowed_lateness": "1s"},
            "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
            "replay": {"end_of_input": "flush"}, "output": {"path": str(out)}}


MUTATIONS = {
    "source.format": ["csv", "parquet", "orc", 3],
    "source.columns": [{"arrival_time": "nope"}, {"key": "value"}, {"offset": "event_time"}, "x", {"bogus": "key"}],
    "source.splits": [None, ["p0"], ["p0", "p1", "p2"], [], "p0", [1, 2]],
    "source.side_inputs": [["p1"], ["p9"], 5],
    "watermark.strategy": ["sql", "monotonous", "nope"],
    "watermark.emit": ["per_event", "periodic", "sometimes"],
    "watermark.max_out_of_orderness": ["0", "-1s", "1h", "ten", None],
    "watermark.idle_timeout": ["1ms", "0", None, "-5s", "never"],
    "watermark.interval": ["1ms", "0", "1d", 17],
    "window.type": ["sliding", "session", "hopping"],
    "window.size": ["1ms", "1d", "0", None, "3s"],
    "window.slide": ["5s", "3s", "0", "20s"],
    "window.gap": ["2s", "0"],
    "window.allowed_lateness": ["0", "1h", "-1s"],
    "window.time": ["event", "ingestion", "processing", "wall"],
    "aggregations": [{"m": "max(value)"}, {"s": "sum(key)"}, {"a": "avg(nope)"}, {"c": "count(value"},
                     {"x": "value + 1"}, {}, {"fire_index": "count(*)"}, {"d": "count(distinct key)"},
                     {"p": "sum(payload)"}, {"first": "first(value)"}],
    "replay.start": ["2024-01-01T00:00:10Z", "2023-12-31T00:00:00Z", "soon"],
    "replay.end": ["2024-01-01T00:00:30Z", "2024-01-01T00:00:00Z", "2020-01-01T00:00:00Z"],
    "replay.end_of_input": ["hold", "flush", "later"],
    "output.windows_files": [0, 2, -1, "three"],
}


@st.composite
def configs(draw, source: Path, out: Path):
    raw = copy.deepcopy(base_config(source, out))
    for key in draw(st.lists(st.sampled_from(sorted(MUTATIONS)), max_size=3, unique=True)):
        value = draw(st.sampled_from(MUTATIONS[key]))
        section, _, name = key.partition(".")
        if not name:
            raw[section] = value
        elif value is None:
            raw[section].pop(name, None)
        else:
            raw[section][name] = value
    if raw["window"].get("type") == "session":
        raw["window"].pop("size", None)
        raw["window"].pop("slide", None)
        raw["window"].setdefault("gap", "2s")
    return raw


# --- the outcome ------------------------------------------------------------------------------------------------

def check_outcome(rc: int, err: str, out: Path) -> str:
    """The property; returns the kind of outcome."""
    assert "Traceback" not in err, err[-4000:]
    ours = [line for line in err.splitlines() if line.startswith("replay:") and not is_progress(line)]
    if rc == 0:
        assert sorted(p.name for p in out.iterdir() if not p.name.startswith("_")) == sorted(DATASETS)
        counts = pq.read_table(out / "counts").to_pylist()
        assert len(counts) == 1, counts
        c = counts[0]
        assert c["rows_read"] == c["rows_in_windows"] + c["late_rows"] + c["quarantined_rows"] + c["skipped_rows"]
        assert pq.read_table(out / "late_events").num_rows == c["late_rows"]
        assert pq.read_table(out / "quarantine").num_rows == c["quarantined_rows"]
        return "ok"
    assert rc in (1, 2), f"exit {rc}:\n{err[-4000:]}"
    assert len(ours) == 1, f"exit {rc} without exactly one line of its own:\n{err[-4000:]}"
    if rc == 2:
        assert ours[0].startswith("replay: config error: key '") or ours[0].startswith("replay: "), ours
    if out.exists():  # nothing partial: no dataset, no staging, no lock
        left = sorted(p.name for p in out.iterdir() if p.name not in ("_range.json",))
        assert left == [], left
    return f"exit {rc}"


# --- without Spark ---------------------------------------------------------------------------------------------

class ReachedSpark(BaseException):
    """The tripwire: the run got as far as starting Spark (not an Exception: nothing may swallow it)."""


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_refusals_before_spark_name_a_key(data, monkeypatch, capsys):
    from event_replay.cli import main

    def no_spark(*args, **kwargs):
        raise ReachedSpark()

    monkeypatch.setattr("event_replay.spark.build_session", no_spark)
    monkeypatch.setattr("event_replay.commands.run.build_session", no_spark)  # the name commands/run.py calls
    base = Path(tempfile.mkdtemp(prefix="replay-fuzz-"))
    try:
        source, out = base / "source", base / "out"
        write_source(source, data.draw(source_files()))
        cfg = base / "job.yaml"
        cfg.write_text(yaml.safe_dump(data.draw(configs(source, out))))
        capsys.readouterr()
        try:
            rc = main(["run", "--config", str(cfg), "--master", "local[1]"])
        except ReachedSpark:
            return
        err = capsys.readouterr().err
        assert rc == 2, err
        assert "Traceback" not in err
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("replay: "), err
        assert not out.exists() or not os.listdir(out)
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- with Spark ------------------------------------------------------------------------------------------------

def replay_example(data, timeout: float = 1200) -> str:
    base = Path(tempfile.mkdtemp(prefix="replay-fuzz-"))
    try:
        source, out = base / "source", base / "out"
        write_source(source, data.draw(source_files(), label="source"))
        cfg = base / "job.yaml"
        cfg.write_text(yaml.safe_dump(data.draw(configs(source, out), label="config")))
        proc = subprocess.Popen([REPLAY, "run", "--config", str(cfg), "--master", "local[1]", "--conf",
                                 "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2"],
                                env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)  # minutes on a loaded machine; seconds when idle
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            raise AssertionError(f"replay run hung (no exit after {timeout:.0f} s)") from None
        return check_outcome(proc.returncode, err, out)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.spark
@settings(max_examples=2, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_replay_run_fails_cleanly_or_succeeds(data):
    replay_example(data)


@pytest.mark.slow
@pytest.mark.spark
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_replay_run_fails_cleanly_or_succeeds_many(data):
    replay_example(data)
