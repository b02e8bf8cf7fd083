"""The why-report's "versus live" entry (why/versus_live.py): the comparison that is the report folder's sibling
`compare/` (its figures, a link to its page) and the calibrations under `<output>/_tuning/`; None when neither is
there; a remote output's tuning results are not listed."""
from __future__ import annotations

import json

from event_replay.layout import COMPARE_FOLDER, COMPARE_SUMMARY_FILE, TUNING_FOLDER, TUNING_JSON_FILE, WHY_FOLDER
from event_replay.why.versus_live import KEEP, calibrations, versus_live

SUMMARY = {"output_path": "/o", "live": {"path": "/live"}, "totals": {"windows": 3}, "partitions": [],
           "min_agreement_pct": 99.0, "page": "index.html", "spark_conf": {"x": 1}}


def write_summary(run, summary=SUMMARY):
    (run / COMPARE_FOLDER).mkdir(parents=True)
    (run / COMPARE_FOLDER / COMPARE_SUMMARY_FILE).write_text(json.dumps(summary))


def write_tuning(out, grid, result):
    (out / TUNING_FOLDER / grid).mkdir(parents=True)
    (out / TUNING_FOLDER / grid / TUNING_JSON_FILE).write_text(json.dumps(result))


def test_nothing_to_show_is_none(tmp_path):
    assert versus_live(tmp_path / WHY_FOLDER, str(tmp_path)) is None
    write_tuning(tmp_path, "plain_grid", {"rows": []})  # a grid that did not run against the live output
    assert versus_live(tmp_path / WHY_FOLDER, str(tmp_path)) is None


def test_the_sibling_comparison_s_figures_and_page(tmp_path):
    run = tmp_path / "_airflow" / "manual__1"
    write_summary(run)
    entry = versus_live(run / WHY_FOLDER, str(tmp_path))
    assert entry == {**{k: v for k, v in SUMMARY.items() if k in KEEP}, "page": "../compare/index.html",
                     "calibrations": [], "diagnosis": None}  # nothing differs: no diagnosis
    assert "spark_conf" not in entry
    assert versus_live(tmp_path / WHY_FOLDER, str(tmp_path)) is None  # another folder's comparison is not this one


def test_an_unreadable_summary_is_no_comparison(tmp_path):
    (tmp_path / COMPARE_FOLDER).mkdir()
    (tmp_path / COMPARE_FOLDER / COMPARE_SUMMARY_FILE).write_text("{")
    assert versus_live(tmp_path / WHY_FOLDER, str(tmp_path)) is None


def test_calibrations_of_the_output_with_or_without_a_comparison(tmp_path, monkeypatch):
    cal = {"verdict": "idle timeout 30s agrees best", "ranking": [{"variant": "a"}], "live": {"path": "/live"}}
    write_tuning(tmp_path, "g2", {"rows": [], "calibration": cal})
    write_tuning(tmp_path, "g1", {"rows": [], "calibration": {"verdict": "none agrees", "ranking": None}})
    write_tuning(tmp_path, "g0", {"rows": []})
    cals = calibrations(tmp_path)
    assert cals == [{"grid": "g1", "verdict": "none agrees", "ranking": [], "live": None},
                    {"grid": "g2", **cal}]
    entry = versus_live(tmp_path / WHY_FOLDER, str(tmp_path))
    assert entry == {"page": None, "calibrations": cals, "diagnosis": None}
    # A remote output's tuning results are not listed (not read as a local path that happens to exist).
    monkeypatch.chdir(tmp_path)
    write_tuning(tmp_path / "s3a:" / "bucket" / "out", "g", {"rows": [], "calibration": cal})
    assert versus_live(tmp_path / WHY_FOLDER, "s3a://bucket/out") is None
