"""Every report over the histories users backfill: two years of days and a year of hours (tests/long_histories.py),
built once per history in the test's Spark session. Spans over ~25 days overflowed 32-bit milliseconds in the
why-report; nothing built a report over more than a few days before.

Per history: a calibration grid (`replay tune --against-live`) and `replay compare` against the live output (here
the replay's own firings: everything must agree), then the data-quality step of a DAG run (GX suites with the live parity suite, why-report), the
run report and the runs page's row, and their figures must agree with each other and with the outputs."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import long_histories

ROOT = Path(__file__).resolve().parents[1]
RUN_ID = "manual__long_history"


@pytest.fixture(scope="module", params=["two_years_of_days", "a_year_of_hours"])
def history(request, spark, tmp_path_factory):
    return getattr(long_histories, request.param)(spark, tmp_path_factory.mktemp(request.param))


@pytest.fixture(scope="module")
def reports(history, spark):
    """calibration, compare, quality and the run report into the run folder an Airflow run would write."""
    from event_replay import cli
    from event_replay.orchestration.report import build_report, write_report
    from event_replay.quality_job import run_quality, write_result

    out = Path(history.cfg.output.path)
    run = out / "_airflow" / RUN_ID
    first, last = history.partitions[0], history.partitions[-1]
    live = ["--live-keeps-updates", "--partitions", f"{first}..{last}"]
    config = str(long_histories.config_file(out))
    assert cli.main(["tune", "--config", config, "--against-live", str(out / "windows"), "--idle-timeout", "5s,30s",
                     *live]) == 0  # the calibrate task's job
    rc = cli.main(["compare", "--config", config, "--live", str(out / "windows"), *live, "--out",
                   str(run / "compare"), "--report-only"])
    assert rc == 0
    quality = run_quality(history.cfg, run, run_name=RUN_ID, spark=spark)
    write_result(quality, run)
    (calibrated,) = (out / "_tuning").rglob("spark_jobs.json")
    report = build_report(str(out), history.partitions, dag_id="event_time_backfill", run_id=RUN_ID,
                          dq="passed" if quality["success"] else "FAILED", data_docs=quality["data_docs"],
                          why_report=quality["why_report"],
                          spark_jobs={**quality["spark_jobs"], **json.loads(calibrated.read_text())})
    write_report(report, run)
    why = json.loads((run / "why_report" / "summary.json").read_text())
    return {"run": run, "quality": quality, "report": report, "why": why}


def test_the_comparison_agrees_everywhere_and_the_grid_ranks_the_run_s_own_setting_first(reports):
    summary = json.loads((reports["run"] / "compare" / "summary.json").read_text())
    assert summary["totals"]["agreement_pct"] == 100.0 and summary["totals"]["differing"] == 0
    assert summary["totals"]["windows"] == reports["why"]["windows"]
    out = Path(reports["quality"]["output_path"])
    (calibration,) = [json.loads(p.read_text()) for p in (out / "_tuning").rglob("calibration.json")]
    best = calibration["ranking"][0]
    assert (best["idle_timeout_ms"], best["firings"]) == (5000, reports["why"]["firings"]), calibration["verdict"]


def test_data_quality_passes_with_the_live_parity_suite(reports):
    q = reports["quality"]
    assert q["success"], q["failed_names"]
    assert Path(q["data_docs"]).is_file() and Path(q["why_report"]).is_file()
    jobs = q["spark_jobs"]
    assert jobs["gx_suites"] > 0 and jobs["why_report"] > 0
    compared = json.loads((reports["run"] / "compare" / "spark_jobs.json").read_text())
    (calibrated,) = Path(q["output_path"], "_tuning").rglob("spark_jobs.json")  # the calibration's own
    compared.update(json.loads(calibrated.read_text()))
    assert compared["compare"] > 0 and compared["calibration"] > 0
    assert (f"- Spark jobs of the reports: calibration {compared['calibration']}, compare {compared['compare']}, "
            f"gx suites {jobs['gx_suites']}, why report {jobs['why_report']}"
            in (reports["run"] / "report.md").read_text())
    docs = Path(q["data_docs"]).parent
    assert any("live_parity" in p.name for p in (docs / "validations").rglob("*")), "no live parity validation"


def test_the_suites_and_the_comparison_are_a_few_spark_jobs_whatever_the_partitions(reports):
    """Issue 46: GX's suites and the comparison run a fixed few Spark jobs, the same over 730 days or 8,760 hours
    as over 3 days (3 and 7 here, 3 and 9 on the demo)."""
    compared = json.loads((reports["run"] / "compare" / "spark_jobs.json").read_text())
    assert reports["quality"]["spark_jobs"]["gx_suites"] <= 10 and compared["compare"] <= 10, compared


def test_the_why_report_reads_partition_by_partition_and_adds_up_to_the_run_report(reports, history):
    why, report = reports["why"], reports["report"]
    parts = why["partitions"]
    assert [p["partition"] for p in parts] == history.partitions
    assert why["counts"]["rows_read"] == sum(p["rows_read"] for p in parts) > 0
    assert why["firings"] == report["totals"]["windows"] == sum(p["firings"] for p in parts)
    assert why["late_rows"] == report["totals"]["late_events"] == sum(p["late_rows"] for p in parts) > 0
    assert why["counts"]["quarantined_rows"] == report["totals"]["quarantine"]
    for p in parts:  # every partition has its own figures: the overview's columns
        assert 0.0 <= p["idle_share"] <= 1.0, p
        assert p["lag_p50_ms"] is None or 0 <= p["lag_p50_ms"] <= p["lag_p90_ms"] <= p["lag_max_ms"], p
    assert sum(p["lag_p50_ms"] is not None for p in parts) >= len(parts) // 2
    assert why["overview_png"] and (reports["run"] / "why_report" / "overview.png").is_file()
    # No panel of the whole range: its timelines are drawn per partition (their drill-downs).
    assert why["spans"] == [] and why["timelines_png"] is None
    assert not (reports["run"] / "why_report" / "timelines.png").exists()
    page = (reports["run"] / "why_report" / "index.html").read_text()
    assert "overview-png" in page and "every-partition" in page  # a long history folds its table
    assert "timelines-per-partition" in page and "timelines-png" not in page


def test_the_runs_page_row_shows_the_same_figures(reports, history, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "plugins"))
    sys.modules.pop("replay_runs", None)
    from replay_runs.runs import list_runs

    out = Path(history.cfg.output.path)
    rows = [r for r in list_runs(out.parent) if r.run_id == RUN_ID]
    assert len(rows) == 1
    row, why = rows[0], reports["why"]
    assert (row.rows_read, row.firings, row.late_rows) == (why["counts"]["rows_read"], why["firings"],
                                                           why["late_rows"])
    assert row.dq == "pass" and row.live is not None and row.live.pct == 100.0
