"""`replay run --partitions A..B --dry-run` (dry_run.py): the partitions, the chunks, the input files
with their rows and bytes, what the output already has, an estimate; nothing written."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from event_replay.dry_run import dry_run, dry_run_line, estimate, lines
from event_replay.orchestration.record import write_record
from event_replay.samples.days import generate_days, write_days
from event_replay.semantics.config import load_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def job(tmp_path):
    write_days(tmp_path / "log", generate_days("2024-01-01", days=3, rows_per_day=200, splits=3, seed=1))
    raw = yaml.safe_load((ROOT / "jobs" / "configs" / "demo_partitioned.yaml").read_text())
    raw["source"]["path"], raw["output"]["path"] = str(tmp_path / "log"), str(tmp_path / "out")
    raw["source"]["splits"] = ["p0", "p1", "p2"]
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(raw))
    out = tmp_path / "out"
    for ds in ("windows", "late_events", "watermarks", "quarantine", "counts"):  # 2024-01-01 is committed
        (out / ds / "dt=2024-01-01").mkdir(parents=True)
        (out / ds / "dt=2024-01-01" / "part-0.parquet").write_bytes(b"x")
    (out / "_state" / "2024-01-01").mkdir(parents=True)
    (out / "_state" / "2024-01-01" / "manifest.json").write_text("{}")
    return config, out


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def test_cli_dry_run_lists_and_writes_nothing(job, tmp_path):
    config, out = job
    before = _tree(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "event_replay.cli", "run", "--config", str(config), "--partitions",
                           "2024-01-02..2024-01-04", "--dry-run"], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _tree(tmp_path) == before  # not a file written, moved or touched: no lock, no staging, no _range.json
    text = proc.stdout
    assert text.startswith("replay: dry run of 2024-01-02..2024-01-04: 3 partitions")
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.startswith("  2024-")}
    assert rows["2024-01-02"][1:3] == ["dt=2024-01-02", "1"] and rows["2024-01-02"][5] == "200"
    assert rows["2024-01-04"][1] == "missing"
    assert "  dt=2024-01-02/part-00000.parquet" in text
    assert "replay: 2024-01-02 continues the carried state of 2024-01-01 (found)" in text
    assert "without a source folder: 2024-01-04" in text
    assert "already committed in" in text and text.count("replay: estimate: about ") == 1
    # every line starts with a word or two spaces: no log reader takes a date at its start for its time
    assert all(line.startswith(("replay: ", "  ")) for line in text.splitlines())


def test_committed_partitions_and_an_estimate_from_earlier_runs(job):
    config, out = job
    cfg = load_config(config)
    d = dry_run(cfg, ["2024-01-01", "2024-01-02", "2024-01-03"], chunk_size=2)
    assert [p.committed for p in d.partitions] == [True, False, False] and d.partitions[0].state
    assert d.chunks == [["2024-01-01", "2024-01-02"], ["2024-01-03"]] and d.rows == 600
    assert "BENCHMARKS.md" in d.estimate_basis
    write_record(out / "_airflow" / "r1", {"jobs": [{"job": 1, "seconds": 30.0, "rows_read": 100_000},
                                                    {"job": 2, "seconds": 40.0, "rows_read": 200_000}]})
    d = dry_run(cfg, ["2024-01-01", "2024-01-02", "2024-01-03"], chunk_size=2)
    assert d.estimate_basis.startswith("from the last 2 jobs on this output: 25 s a job")
    seconds, _ = estimate(600, 2, [{"seconds": 30.0, "rows_read": 100_000}, {"seconds": 40.0, "rows_read": 200_000}])
    assert seconds == pytest.approx(2 * 25 + 600 * 20 / 300_000)
    assert "already committed" in dry_run_line(d) and "600 rows" in dry_run_line(d)
    assert any("2024-01-01" in line and "yes" in line for line in lines(d))
    assert json.loads(json.dumps(d.to_dict()))["rows"] == 600  # what the DAG keeps as an XCom
