"""`replay` end to end, as a user runs it: the console script in a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

REPLAY = str(Path(sys.executable).parent / "replay")  # the console script of the venv running the tests
ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.spark


def run(*args, timeout=1500):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([REPLAY, *args], capture_output=True, text=True, timeout=timeout, env=env)


def job_config(log: Path, out: Path, **changes) -> dict:
    raw = yaml.safe_load((ROOT / "jobs" / "configs" / "demo.yaml").read_text())
    raw["source"]["path"] = str(log)
    raw["output"]["path"] = str(out)
    for section, values in changes.items():
        raw.setdefault(section, {}).update(values)
    return raw


@pytest.fixture(scope="module")
def sample_log(tmp_path_factory) -> Path:
    log = tmp_path_factory.mktemp("cli") / "log"
    res = run("sample", "--out", str(log), "--rows", "2000", "--splits", "3", "--seed", "11", "--rate", "50")
    assert res.returncode == 0, res.stderr
    assert "2000 rows" in res.stdout
    assert len(list(log.glob("*.parquet"))) == 4
    return log


def test_sample_log_shape(sample_log):
    t = pq.read_table(sample_log)
    assert t.column_names == ["split", "offset", "arrival_time", "event_time", "key", "value"]
    assert t.num_rows == 2000
    d = t.to_pandas()
    assert sorted(d["split"].unique()) == ["p0", "p1", "p2"]
    # Offsets are 0..n-1 per split, increasing with arrival; the last split falls silent early.
    for _, g in d.sort_values(["split", "arrival_time", "offset"]).groupby("split"):
        assert list(g["offset"]) == list(range(len(g)))
    last_arrival = d.groupby("split")["arrival_time"].max()
    assert last_arrival["p2"] < last_arrival["p0"] - (last_arrival["p0"] - d["arrival_time"].min()) * 0.3
    # Out-of-order events: event time is not monotonic within a split.
    assert (d.sort_values(["split", "offset"]).groupby("split")["event_time"].diff().dt.total_seconds() < 0).any()


def test_run_end_to_end(sample_log, tmp_path):
    out = tmp_path / "out"
    cfg = tmp_path / "job.yaml"
    cfg.write_text(yaml.safe_dump(job_config(sample_log, out), sort_keys=False))
    res = run("run", "--config", str(cfg), "--master", "local[2]")
    assert res.returncode == 0, res.stderr[-4000:]
    summary = [line for line in res.stdout.splitlines() if line.startswith("replay:")]
    assert len(summary) == 1 and "rows read 2000" in summary[0], res.stdout
    for part in ("firings", "late rows", "quarantined rows 0", " s ", "driver heap"):
        assert part in summary[0]
    assert sorted(p.name for p in out.iterdir()) == ["counts", "late_events", "quarantine", "watermarks", "windows"]
    expected = {
        "windows": ["key", "window_start", "window_end", "fire_index", "fire_watermark", "fire_reason",
                    "cnt", "total", "max_value"],
        "late_events": ["split", "offset", "arrival_time", "event_time", "key", "value", "late_watermark"],
        "watermarks": ["replay_time", "scope", "split", "watermark", "idle"],
        "quarantine": ["split", "offset", "arrival_time", "event_time", "key", "value", "reason"],
        "counts": ["rows_read", "rows_in_windows", "late_rows", "quarantined_rows", "skipped_rows"],
    }
    tables = {name: pq.read_table(out / name) for name in expected}
    for name, cols in expected.items():
        assert tables[name].column_names[:len(cols)] == cols, name
    for name in ("window_start", "window_end", "fire_watermark"):
        assert str(tables["windows"].schema.field(name).type).startswith("timestamp"), name
    assert str(tables["watermarks"].schema.field("replay_time").type).startswith("timestamp")
    counts = tables["counts"].to_pylist()
    assert len(counts) == 1 and counts[0]["rows_read"] == 2000
    c = counts[0]
    assert c["rows_in_windows"] + c["late_rows"] + c["quarantined_rows"] + c["skipped_rows"] == 2000
    assert c["late_rows"] == tables["late_events"].num_rows
    assert f"firings {tables['windows'].num_rows}," in summary[0]
    windows = tables["windows"].to_pandas()
    assert windows["fire_reason"].isin(["watermark", "late_row", "end_of_input"]).all()
    assert (windows["cnt"] > 0).all() and windows["cnt"].sum() >= c["rows_in_windows"]
    wm = tables["watermarks"].to_pandas()
    assert set(wm["scope"]) == {"split", "stream"} and wm["idle"].any()  # p2 falls silent: idle at some point


def test_bad_config_exits_2_naming_the_key(tmp_path):
    cfg = tmp_path / "bad.yaml"
    raw = job_config(tmp_path / "log", tmp_path / "out")
    raw["window"]["size"] = "ten seconds"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    res = run("run", "--config", str(cfg), timeout=120)
    assert res.returncode == 2
    assert "window.size" in res.stderr and "ten seconds" in res.stderr
    assert not (tmp_path / "out").exists()


def test_unknown_key_and_missing_file_exit_2(tmp_path):
    cfg = tmp_path / "bad.yaml"
    raw = job_config(tmp_path / "log", tmp_path / "out")
    raw["watermark"]["idle"] = "5s"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    res = run("run", "--config", str(cfg), timeout=120)
    assert res.returncode == 2 and "watermark.idle" in res.stderr
    res = run("run", "--config", str(tmp_path / "nope.yaml"), timeout=120)
    assert res.returncode == 2 and "nope.yaml" in res.stderr
    res = run("frobnicate", timeout=120)
    assert res.returncode == 2


def test_missing_source_exits_2_naming_source_path(tmp_path):
    cfg = tmp_path / "job.yaml"
    cfg.write_text(yaml.safe_dump(job_config(tmp_path / "no-such-log", tmp_path / "out")))
    res = run("run", "--config", str(cfg), "--master", "local[1]")
    assert res.returncode == 2, res.stderr[-3000:]
    assert "source.path" in res.stderr


def test_validate_passes_then_names_the_broken_rule(sample_log, tmp_path):
    out = tmp_path / "out"
    cfg = tmp_path / "job.yaml"
    cfg.write_text(yaml.safe_dump(job_config(sample_log, out), sort_keys=False))
    assert run("run", "--config", str(cfg), "--master", "local[2]").returncode == 0
    ok = run("validate", "--config", str(cfg))
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-3000:]
    assert (out / "_data_docs" / "index.html").exists()
    # Corrupt the output: one firing written twice.
    windows = next((out / "windows").glob("*.parquet"))
    table = pq.read_table(windows)
    pq.write_table(pa.concat_tables([table, table.slice(0, 1)]), windows)
    for checksum in (out / "windows").glob(".*.crc"):  # Hadoop's checksums would reject the edited file
        checksum.unlink()
    bad = run("validate", "--config", str(cfg))
    assert bad.returncode == 1, bad.stdout[-3000:] + bad.stderr[-3000:]
    assert "FAILED" in bad.stdout.upper() and "duplicate" in bad.stdout.lower(), bad.stdout[-3000:]


def test_sessions_without_the_extension_are_refused_before_spark(sample_log, tmp_path, monkeypatch, capsys):
    """The session walk runs in the engine's Spark extension: with no jar built, `replay run` says how to get it
    and starts nothing."""
    from event_replay import cli, extension

    monkeypatch.setattr(extension, "JAR", tmp_path / "missing" / "event-replay-spark.jar")
    cfg = tmp_path / "sessions.yaml"
    raw = job_config(sample_log, tmp_path / "out")
    raw["window"] = {"type": "session", "gap": "10s"}
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    for command in (["run", "--config", str(cfg)], ["tune", "--config", str(cfg), "--allowed-lateness", "0s,1s"]):
        assert cli.main(command) == 2
        err = capsys.readouterr().err
        assert "session windows need the engine's Spark extension" in err and "make install" in err
    assert not (tmp_path / "out").exists()


def test_a_command_builds_only_its_own_parser_and_help_builds_all():
    """`replay run ...` enters no other command's module (docs/architecture.md, the path of a run); `replay --help`
    and an unknown command still list every command."""
    from event_replay.cli import build_parser

    def commands(parser):
        return sorted(parser._subparsers._group_actions[0].choices)

    every = ["compare", "config", "quality", "run", "sample", "tune", "validate", "verify", "why"]
    assert commands(build_parser("run")) == ["run"]
    assert commands(build_parser("why")) == ["quality", "validate", "verify", "why"]
    assert commands(build_parser(None)) == commands(build_parser("--help")) == commands(build_parser("nosuch")) == every
