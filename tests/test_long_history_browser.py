"""A 32-day backfill's why-report in headless Chromium (issue 48, Deliver 1): the per-partition overview (its
figure drawn, the 10 worst days first, all 32 in the fold, the total adding up), the drill-down of one day
(`replay why --partition D`) linked from the range's page, and that day's page showing the figures of its row.

Built in the tests' Spark session from samples/days.py (2 splits, a few rows a day: a day costs the replay its
folders, not its rows). Screenshots land in $REPLAY_SCREENSHOTS (default build/screenshots)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from headless_chromium import chromium

import long_histories
from event_replay.why.page import LISTED

ROOT = Path(__file__).resolve().parents[1]
SHOTS = Path(os.environ.get("REPLAY_SCREENSHOTS") or ROOT / "build" / "screenshots")
DAYS = LISTED + 1  # the fewest days whose page lists its 10 worst first and folds every day under them

pytestmark = pytest.mark.spark  # in `make test`: 32 days of 6 rows in the session's Spark, no Airflow


@pytest.fixture(scope="module")
def forty_days(spark, tmp_path_factory):
    from event_replay.pipeline import PartitionSpan
    from event_replay.range_replay import run_range
    from event_replay.samples.days import generate_days, write_days
    from event_replay.why.report import why_report

    root = tmp_path_factory.mktemp("forty_days")
    table = generate_days("2024-03-01", days=DAYS, rows_per_day=6, splits=2, rate=1.0, cross_day_stragglers=1)
    ids = write_days(root / "source", table)
    cfg = long_histories.config(root / "source", root / "out")
    run_range(spark, cfg, PartitionSpan.between(first_id=ids[0], last_id=ids[-1], first=True, previous=None,
                                       end_of_input="flush", allow_missing=False), progress=lambda line: None)
    index = Path(why_report(cfg.output.path, cfg, spark=spark))
    summary = json.loads((index.parent / "summary.json").read_text())
    # The day with the most late rows (ties: the first): the one a user would look into.
    day = max(summary["partitions"], key=lambda p: (p["late_rows"], -ids.index(p["partition"])))["partition"]
    drilled = Path(why_report(cfg.output.path, cfg, spark=spark, partition=day))
    return {"index": index, "ids": ids, "day": day, "drilled": drilled,
            "summary": json.loads((index.parent / "summary.json").read_text())}


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chrome")) as driver:
        yield driver


def _rows(browser, table_id: str) -> list[dict[str, str]]:
    return browser.execute_script("""
        const t = document.getElementById(arguments[0]);
        const head = [...t.querySelectorAll('thead th')].map(h => h.textContent.trim());
        return [...t.querySelectorAll('tbody tr')].map(tr => Object.fromEntries(
            [...tr.querySelectorAll('td')].map((td, i) => [head[i], td.textContent.trim()])));""", table_id)


def _shot(browser, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"{name}.png"))


def _n(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_overview_lists_every_day_and_links_the_drill_down(forty_days, browser):
    s, ids, day = forty_days["summary"], forty_days["ids"], forty_days["day"]
    browser.get(forty_days["index"].resolve().as_uri())
    _shot(browser, "forty-days-why-report")
    img = browser.execute_script("const i = document.getElementById('overview-png'); "
                                 "return i && i.complete ? [i.naturalWidth, i.naturalHeight] : null")
    assert img and img[0] > 0 and img[1] > 0, "the overview figure is not drawn"
    worst = _rows(browser, "worst-partitions")
    assert len(worst) == 10 and worst[0]["partition"] == day, worst[:2]
    every = _rows(browser, "partitions")  # in the fold: the DOM has it even closed
    assert [r["partition"] for r in every[:-1]] == ids and every[-1]["partition"] == "total"
    assert sum(_n(r["late rows"]) for r in every[:-1]) == _n(every[-1]["late rows"]) == s["late_rows"] > 0
    assert sum(_n(r["firings"]) for r in every[:-1]) == _n(every[-1]["firings"]) == s["firings"]
    assert all(r["lag p50"] and r["held the stream most"] for r in every[:-1])
    # 32 days are not drawn as one panel: the timelines section names the worst days, the drilled one linked.
    assert not browser.find_elements("css selector", "#timelines-png")
    named = [li.text for li in browser.find_elements("css selector", "#timeline-pages li")]
    assert named and named[0].startswith(day) and all("--partition" in t for t in named[1:]), named
    assert browser.find_elements("css selector", f"#timeline-pages a[href$='partitions/{day}/index.html']")
    link = browser.find_element("css selector", f"#drill-down a[href$='partitions/{day}/index.html']")
    row = next(r for r in every if r["partition"] == day)
    link.click()
    assert browser.current_url.endswith(f"partitions/{day}/index.html")
    _shot(browser, "forty-days-drill-down")
    text = browser.execute_script("return document.body.innerText")
    own = _rows(browser, "partitions")
    assert [r["partition"] for r in own][0] == day, own
    for column in ("rows read", "late rows", "firings", "quarantined", "idle", "lag p50", "lag p90", "lag max",
                   "held the stream most"):  # one row, the same figures on both pages
        assert own[0][column] == row[column], (column, own[0], row)
    assert "the range's why-report" in text
    assert browser.execute_script("const i = document.getElementById('timelines-png'); "
                                  "return i.complete && i.naturalWidth > 0"), "the day's timelines are not drawn"
