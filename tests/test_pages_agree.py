"""Every page shows the same value for each figure (issue 48, Deliver 3): the demo (its config, its sample made
smaller: 3 days of 300 rows) replayed as the backfill DAG's tasks do it, by the functions they call, in the tests'
Spark session (the range replay, the compare_live task's compare against a stand-in live output that differs in one
window, the data-quality step's accounting suite and why-report, a what-if grid of the config's own settings, the run
report), then each page opened in headless Chromium and read as a person reads it:
the why-report, report.html, the compare page, the tuning table and the Replay runs page (their tables rendered by
the plugin's own functions over the runs root; Airflow's login in front of them is test_plugin_browser.py's).

Figures: firings, windows, late rows, the mean watermark lag, the agreement with the live output; and the row
accounting (rows read, in windows, late, quarantined, skipped, filtered; firings; windows) as the Data Docs show it
(the accounting suite's observed values), against the why-report's and the run report's.
Screenshots of the pages land in $REPLAY_SCREENSHOTS (default build/screenshots)."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from headless_chromium import chromium
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins"))

# In `make test`: 3 days of 300 rows in the session's Spark, one GX suite, no Airflow process.
pytestmark = pytest.mark.spark

DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]
RUN_ID = "manual__2024-01-04T00:00:00+00:00"
ROWS_PER_DAY = 300
LIVE_COLUMNS = "key=key_id,window_start=win_start,window_end=win_end,cnt=events,total=amount,fire_watermark=wm"
SHOTS = Path(os.environ.get("REPLAY_SCREENSHOTS") or ROOT / "build" / "screenshots")


@pytest.fixture(scope="module")
def demo(spark, tmp_path_factory):
    """The demo's run folder, its outputs and the pages of the plugin, as files."""
    from event_replay.compare.live_spec import LiveSpec, parse_mapping
    from event_replay.compare.replay_side import Scope
    from event_replay.compare.run import CompareOptions, compare
    from event_replay.orchestration.tasks import data_quality_result
    from event_replay.pipeline import PartitionSpan
    from event_replay.orchestration.report import build_report, write_plan_record, write_report
    from event_replay.quality_job import run_quality, write_result
    from event_replay.range_replay import run_range
    from event_replay.samples.days import generate_days, write_days
    from event_replay.semantics.config import parse_config
    from event_replay.tuning.grid import parse_grid
    from event_replay.tuning.runner import run_tuning
    from replay_runs.runs import safe_run_id

    base = tmp_path_factory.mktemp("demo")
    # The demo's sample (samples/days.py, 4 splits, one falling silent, stragglers across the days), smaller.
    write_days(base / "log", generate_days(DAYS[0], days=len(DAYS), rows_per_day=ROWS_PER_DAY, splits=4, seed=7))
    raw = yaml.safe_load((ROOT / "jobs" / "configs" / "demo_partitioned.yaml").read_text())
    out = base / "runs" / "demo_partitioned"
    raw["source"]["path"], raw["output"]["path"] = str(base / "log"), str(out)
    cfg = parse_config(raw)
    run = out / "_airflow" / safe_run_id(RUN_ID)
    run.mkdir(parents=True)
    (run / "job.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    write_plan_record(run, DAYS, partitions_per_job=31)
    # The backfill DAG's tasks, in order, as their modules call them: the range replay, compare_live, data quality
    # (GX suites and why-report), the run report; a what-if grid of the config's own settings beside them.
    run_range(spark, cfg, PartitionSpan.between(first_id=DAYS[0], last_id=DAYS[-1], first=True, previous=None,
                                       end_of_input="flush", allow_missing=False), progress=lambda line: None)
    (run / "done").mkdir()
    for d in DAYS:
        (run / "done" / d).touch()
    _live_output(out, base / "live")
    spec = LiveSpec(path=str(base / "live" / "firings"), format="json", late_path=str(base / "live" / "late"),
                    columns=parse_mapping(LIVE_COLUMNS, "--live-columns"), keeps_updates=True)
    compare(spark, cfg, spec, CompareOptions(scope=Scope(DAYS[0], DAYS[-1]), min_agreement_pct=90.0,
                                             out_dir=str(run / "compare")))
    # Of the GX suites, the one whose figures the pages show (the others check rules, not figures, and cost a minute).
    dq = run_quality(cfg, run, run_name=RUN_ID, spark=spark, suites=["accounting"])
    write_result(dq, run)
    grid, variants = parse_grid(cfg, "500ms", "5s", None)  # the config's own settings: one variant
    run_tuning(spark, cfg, grid, variants, log=lambda m: None)
    write_report(build_report(str(out), DAYS, dag_id="event_time_backfill", run_id=RUN_ID,
                              config_file="jobs/configs/demo_partitioned.yaml", config_path=str(run / "job.yaml"),
                              dq=data_quality_result(dq, warn_only=False)["status"], data_docs=dq["data_docs"],
                              why_report=dq["why_report"]), run)
    pages = base / "pages"
    pages.mkdir()
    _plugin_pages(base / "runs", pages)
    return {"run": run, "out": out, "pages": pages, "dq": dq, "cfg": cfg}


def _live_output(out: Path, live: Path) -> None:
    """A stand-in for the live job's output in its sink's layout (jobs/live/demo/README.md): the replay's own
    firings and late rows as JSON lines, but one firing counts a row more, so exactly one window differs."""
    import pyarrow.parquet as pq

    windows = pq.read_table(out / "windows").to_pandas().sort_values(["window_start", "key", "fire_index"])
    firings = windows.rename(columns={"key": "key_id", "window_start": "win_start", "window_end": "win_end",
                                      "cnt": "events", "total": "amount", "fire_watermark_ms": "wm"})
    firings["wm"] = firings["wm"].astype("Int64")  # null for the flush at the end: integers, not floats
    firings.loc[firings.index[0], "events"] += 1
    late = pq.read_table(out / "late_events").to_pandas()
    for folder, frame, cols in (
            ("firings", firings, ["key_id", "win_start", "win_end", "events", "amount", "wm"]),
            ("late", late, ["split", "offset", "arrival_time", "event_time", "key", "value"])):
        for day, rows in frame.groupby(frame["dt"].astype(str)):  # each in the day the replay wrote it
            (live / folder / f"dt={day}").mkdir(parents=True)
            rows[cols].to_json(live / folder / f"dt={day}" / "part-00000.json", orient="records", lines=True,
                               date_format="iso", date_unit="ms")


def _plugin_pages(root: Path, pages: Path) -> None:
    """The Replay runs page's table and the tuning page's table, rendered by the plugin's functions over `root`."""
    from starlette.requests import Request

    from event_replay.tuning.table import html_table
    from replay_runs.dagruns import merge
    from replay_runs.artifacts import tuning_results
    from replay_runs.runs import list_runs
    from replay_runs.table import TABLE_STYLE, runs_table

    request = Request({"type": "http", "root_path": "/replay-runs", "headers": [], "path": "/", "query_string": b""})
    rows = merge(list_runs(root), [])
    doc = "<!doctype html><html><head><meta charset='utf-8'><style>{}</style></head><body>{}</body></html>".format
    (pages / "runs.html").write_text(doc(TABLE_STYLE, "<h1>Replay runs</h1>" + runs_table(request, rows)))
    out = next(r.output for r in rows if r.output)
    tables = "".join(html_table(r.get("rows", []), f"tuning-{i}") for i, r in enumerate(tuning_results(root, out)))
    (pages / "tuning.html").write_text(doc(TABLE_STYLE, "<h1>What-if tuning</h1>" + tables))


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chrome")) as driver:
        yield driver


def _open(browser, path: Path, shot: str) -> str:
    """The page's visible text; a screenshot of it as `shot`.png."""
    browser.get(path.resolve().as_uri())
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"{shot}.png"))
    return browser.execute_script("return document.body.innerText")


def _table(browser, selector: str) -> list[dict[str, str]]:
    """The rows of the page's table as {heading: cell text}."""
    return browser.execute_script("""
        const t = document.querySelector(arguments[0]);
        const head = [...t.querySelectorAll('thead th, tr:first-child th')].map(h => h.innerText.trim());
        return [...t.querySelectorAll('tbody tr')].map(tr => Object.fromEntries(
            [...tr.querySelectorAll('td')].map((td, i) => [head[i], td.innerText.trim()])));""", selector)


def _n(text: str) -> int:
    return int(text.replace(",", ""))


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+) (ms|s)", text.strip()).groups()
    return float(value) * (1000 if unit == "s" else 1)


def test_every_page_shows_the_same_figures(demo, browser):
    run, pages = demo["run"], demo["pages"]
    why = json.loads((run / "why_report" / "summary.json").read_text())
    firings, windows, late = why["firings"], why["windows"], why["late_rows"]
    live = json.loads((run / "compare" / "summary.json").read_text())["totals"]
    agreement = f"{live['agreement_pct']:.2f}%"
    assert late > 0 and live["differing"] == 1, (late, live)  # the stand-in differs in one window (_live_output)

    # The why-report: the totals' line and the lag's.
    text = _open(browser, run / "why_report" / "index.html", "pages-why-report")
    m = re.search(r"([\d,]+) firings of ([\d,]+) windows, ([\d,]+) late rows", text)
    assert m and tuple(map(_n, m.groups())) == (firings, windows, late), text[:800]
    lag = re.search(r"the lag is ([\d.]+ m?s) on average", text).group(1)
    # The run report (report.html): the total row, the vs-live line.
    text = _open(browser, run / "report.html", "pages-report")
    total = next(r for r in _table(browser, "#report-partitions") if r.get("partition") == "total")
    assert (_n(total["firings"]), _n(total["late rows"])) == (firings, late), total
    assert f"{agreement} agreement: {live['differing']} of {windows} windows differ" in text, text
    # The compare page: the windows compared and the agreement.
    text = _open(browser, run / "compare" / "index.html", "pages-compare")
    assert f"{windows:,} windows compared" in text and f"(agreement {agreement})" in text, text[:800]
    assert live["windows"] == windows and live["replay_firings"] == firings
    assert live["late_matched"] + live["late_replay_only"] == late
    # The what-if table: the variant of the config's own settings.
    _open(browser, pages / "tuning.html", "pages-tuning")
    (row,) = _table(browser, "#tuning-0")
    assert (_n(row["late rows"]), _n(row["firings"]), _n(row["windows"])) == (late, firings, windows), row
    assert _ms(row["wm lag mean"]) == pytest.approx(_ms(lag), abs=0.5), (row, lag)  # both to the millisecond
    assert row["wm lag mean"] == lag
    # The Replay runs page: the run's row.
    _open(browser, pages / "runs.html", "pages-runs")
    (cells,) = _table(browser, "#runs")
    assert (_n(cells["firings"]), _n(cells["late rows"])) == (firings, late), cells
    assert cells["vs live"].startswith(agreement) and f"{live['differing']} of {windows} windows" in cells["vs live"]
    assert cells["DQ"] == "pass", cells
    # The Data Docs: the accounting suite passed on these outputs, its figures (each expectation's observed value)
    # the why-report's (its page's total row) and the run report's.
    _open(browser, run / "why_report" / "index.html", "pages-why-report")
    why_total = next(r for r in _table(browser, "#partitions") if r.get("partition") == "total")
    (page,) = (Path(demo["dq"]["data_docs"]).parent / "validations" / "replay_accounting").rglob("*.html")
    text = _open(browser, page, "pages-data-docs-accounting")
    assert demo["dq"]["success"] and re.search(r"Unsuccessful Expectations\s+0\b", text), text[:800]
    docs = _data_docs_figures(browser)
    counts = why["counts"]
    assert {k: _n(v) for k, v in docs.items()} == {
        "rows read": counts["rows_read"], "rows in windows": counts["rows_in_windows"], "late rows": late,
        "quarantined rows": counts["quarantined_rows"], "skipped rows": counts["skipped_rows"],
        "filtered rows": counts.get("filtered_rows", 0), "firings": firings, "windows": windows}, docs
    assert [_n(docs[k]) for k in ("rows read", "late rows", "firings", "quarantined rows")] == [
        _n(why_total[k]) for k in ("rows read", "late rows", "firings", "quarantined")], why_total
    assert (_n(docs["firings"]), _n(docs["late rows"]), _n(docs["quarantined rows"])) == (
        _n(total["firings"]), _n(total["late rows"]), _n(total["quarantined rows"])), total


def _data_docs_figures(browser) -> dict[str, str]:
    """The accounting result's figures as Data Docs show them: {label: observed value} of each `Figure:` row."""
    return browser.execute_script("""
        const out = {};
        for (const tr of document.querySelectorAll('tr')) {
            const cells = [...tr.querySelectorAll(':scope > td')].map(td => td.innerText.trim());
            const i = cells.findIndex(c => c.startsWith('Figure: '));
            if (i >= 0) out[cells[i].slice(8).split(' (')[0]] = cells[cells.length - 1];
        }
        return out;""")
