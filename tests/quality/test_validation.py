"""`validate` (quality/validation.py): the saved suites through GX checkpoints on a replay's outputs, the report
it returns (what failed, with evidence; the summary line), where the Data Docs go and what each result's data asset
is named, and `replay validate`'s exit codes. (Each rule against a broken output: test_expectations.py.)"""
from __future__ import annotations

import shutil

import pytest
import yaml

from event_replay.cli import main
from event_replay.quality.validation import ExpectationOutcome, ValidationReport, asset_name, default_docs_dir, \
    main_validate
from event_replay.semantics.config import to_raw
from event_replay.semantics.reference import replay
from quality_outputs import read_frames, write_case, write_frames
from strategies import random_case


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A flushed tumbling case that fires a few windows, written as a replay writes it."""
    for seed in range(3000):
        c = random_case(seed)
        if c.cfg.window.type == "tumbling" and c.cfg.replay.end_of_input == "flush" and \
                len(replay(c.rows, c.cfg, declared_splits=c.declared_splits).firings) >= 3:
            out = tmp_path_factory.mktemp("validation") / "out"
            cfg, _ = write_case(c, out)
            return cfg, out
    raise AssertionError("no generated case fits")


def test_the_report_names_what_failed_with_its_evidence(tmp_path):
    ok = ExpectationOutcome("windows", "expect_fire_index_contiguous", "fire indexes count up", True, observed=0)
    bad = ExpectationOutcome("watermarks", "expect_watermark_non_decreasing", "a split's watermark never goes back",
                             False, observed=2, unexpected_sample=({"split": "p0"},))
    broke = ExpectationOutcome("accounting", "expect_every_row_accounted_for", "every row counted once", False,
                               error="AnalysisException: no column")
    report = ValidationReport(False, "/data/out", str(tmp_path / "docs"), [ok, bad, broke])
    assert report.failed == [bad, broke]
    assert report.failed_names() == {"expect_watermark_non_decreasing", "expect_every_row_accounted_for"}
    assert report.docs_index == str(tmp_path / "docs" / "index.html")
    assert report.summary().split("\n") == [
        "validate /data/out: FAILED (1/3 expectations passed)",
        "  FAILED watermarks/expect_watermark_non_decreasing (observed 2): a split's watermark never goes back",
        "  FAILED accounting/expect_every_row_accounted_for (observed None): every row counted once "
        "[error: AnalysisException: no column]",
        f"  Data Docs: {tmp_path / 'docs' / 'index.html'}"]
    quiet = ValidationReport(True, "/data/out", None, [ok])
    assert quiet.docs_index is None and quiet.summary() == "validate /data/out: OK (1/1 expectations passed)"


def test_data_docs_go_beside_the_output_by_an_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert default_docs_dir("out/demo/") == str(tmp_path / "out" / "demo" / "_data_docs")


def test_each_result_names_its_dataset_output_and_partitions():
    assert asset_name("windows", "/data/out/", []) == "windows/ of /data/out, one run (not partitioned)"
    assert asset_name("accounting", "/data/out", ["2024-01-01"]) == \
        "counts/ against every output of /data/out, partition 2024-01-01"
    assert asset_name("late_events", "/data/out", ["2024-01-01", "2024-01-02", "2024-01-03"]) == \
        "late_events/ of /data/out, partitions 2024-01-01..2024-01-03 (3)"


@pytest.mark.spark
def test_main_validate_exit_codes(spark, written, tmp_path):
    cfg, good = written
    bad = tmp_path / "bad.yaml"
    raw = to_raw(cfg)
    raw["window"]["type"] = "hopping"
    bad.write_text(yaml.safe_dump(raw))
    # A config that cannot be used: main_validate raises ConfigError, `replay validate` exits 2 (exits.py).
    assert main(["validate", "--config", str(bad)]) == 2
    assert main(["validate", "--config", str(tmp_path / "absent.yaml")]) == 2
    broken = tmp_path / "broken"
    shutil.copytree(good, broken)
    frames = read_frames(good)
    frames["counts"].loc[0, "skipped_rows"] += 1
    write_frames(broken, frames, like=good)
    raw = to_raw(cfg)
    raw["output"]["path"] = str(broken)
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert main_validate(str(path)) == 1
    assert (broken / "_data_docs" / "index.html").is_file()
    raw["output"]["path"] = str(tmp_path / "nothing-here")
    path.write_text(yaml.safe_dump(raw))
    assert main_validate(str(path)) == 1
