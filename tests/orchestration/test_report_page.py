"""The run report as a page (orchestration/report_page.py): the header facts as a table (a report inside the run
folder linked relative to it, one outside shown as text), the per-partition table with its total row, the missing
outputs named in one line only when there are some, and everything the run supplies escaped. report.md beside it and
write_report: test_orchestration_report.py."""
from __future__ import annotations

from html.parser import HTMLParser

from event_replay.orchestration.report_page import render_html

FOLDER = "/runs/out/_airflow/manual__1"


def _part(partition: str, rows: dict, state: str | None = None) -> dict:
    full = {"windows": None, "late_events": None, "watermarks": None, "quarantine": None, "counts": None, **rows}
    return {"partition": partition, "rows": full, "missing_outputs": [k for k, v in full.items() if v is None],
            "state": state}


def _report(**extra) -> dict:
    parts = [_part("2024-03-01", {"windows": 1200, "late_events": 0, "watermarks": 3, "quarantine": 1, "counts": 1},
                   state="/runs/out/_state/dt=2024-03-01"),
             _part("2024-03-02", {"late_events": 2, "quarantine": 0, "counts": 1})]
    totals = {"windows": 1200, "late_events": 2, "watermarks": 3, "quarantine": 1, "counts": 2}
    return {"run_id": "manual__1", "dag_id": "event_time_backfill", "config_file": "job.yaml",
            "output_path": "/runs/out", "partitions": parts, "totals": totals, **extra}


class _Tables(HTMLParser):
    """The text of each table's rows, by table id; the hrefs."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.hrefs: list[str] = []
        self._table: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = a.get("id")
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self.tables[self._table][-1].append("")
        elif tag == "a":
            self.hrefs.append(a["href"])

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._table and self.tables[self._table] and self.tables[self._table][-1]:
            self.tables[self._table][-1][-1] += data


def _parsed(page: str) -> _Tables:
    p = _Tables()
    p.feed(page)
    return p


def test_the_partition_table_with_a_total_row_and_missing_outputs_named():
    page = render_html(_report(), FOLDER)
    rows = _parsed(page).tables["report-partitions"]
    assert rows == [
        ["partition", "firings", "late rows", "watermark rows", "quarantined rows", "count rows", "carried state"],
        ["2024-03-01", "1,200", "0", "3", "1", "1", "yes"],
        ["2024-03-02", "\u2013", "2", "\u2013", "0", "1", "no"],
        ["total", "1,200", "2", "3", "1", "2", "\u2013"],
    ]
    assert "<p class='bad' id='missing'>Outputs missing: 2024-03-02: windows, watermarks</p>" in page
    assert page.startswith("<!doctype html>") and page.endswith("</html>\n")
    assert "<title>Replay report manual__1</title>" in page and "<p class='muted'>event_time_backfill</p>" in page
    assert "firings = windows/, late rows = late_events/" in page and "<a href='report.md'>report.md</a>" in page


def test_a_complete_run_has_no_missing_line():
    report = _report()
    report["partitions"] = report["partitions"][:1]
    page = render_html(report, FOLDER)
    assert "id='missing'" not in page and "Outputs missing" not in page
    assert len(_parsed(page).tables["report-partitions"]) == 3  # heading, the partition, total


def test_facts_link_reports_inside_the_run_folder_relative_to_it():
    page = render_html(_report(why_report=f"{FOLDER}/why/index.html", data_docs="/elsewhere/docs/index.html",
                               dq="passed (12 expectations)"), FOLDER)
    parsed = _parsed(page)
    assert parsed.tables["facts"] == [["config", "job.yaml"], ["outputs", "/runs/out"],
                                      ["data quality", "passed (12 expectations)"],
                                      ["Data Docs", "/elsewhere/docs/index.html"],
                                      ["why-report", f"{FOLDER}/why/index.html"]]
    # the why-report is under the run folder: a relative link; Data Docs elsewhere: text only
    assert parsed.hrefs == ["why/index.html", "report.md"]
    assert f"<a href='why/index.html'>{FOLDER}/why/index.html</a>" in page


def test_what_the_run_supplies_is_escaped():
    page = render_html(_report(run_id="r<1>&", dag_id="d'\"g", config_file="<job>.yaml",
                               why_report=f"{FOLDER}/it's <here>/index.html"), FOLDER)
    assert "<title>Replay report r&lt;1&gt;&amp;</title>" in page
    assert "<code>r&lt;1&gt;&amp;</code>" in page and "<p class='muted'>d&#x27;&quot;g</p>" in page
    assert "<td>&lt;job&gt;.yaml</td>" in page and "<job>" not in page
    assert "<a href='it&#x27;s &lt;here&gt;/index.html'>" in page
    assert _parsed(page).hrefs[0] == "it's <here>/index.html"


def test_a_report_without_a_run_id_has_a_plain_title():
    report = _report()
    del report["run_id"]
    page = render_html(report, FOLDER)
    assert "<title>Replay report</title>" in page and "<h1>Replay report <code></code></h1>" in page
