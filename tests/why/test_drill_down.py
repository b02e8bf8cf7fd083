"""A partition's own why-report below the range's: the range's page is rendered again with its link."""
from __future__ import annotations

import json

from event_replay.layout import WHY_SUMMARY_FILE
from event_replay.why.drill_down import as_in_range, drilled, link_from_range, partition_report_dir
from event_replay.why.page import render


def _summary(partitions, **extra):
    return {"output_path": "/o", "counts": {"rows_read": 2}, "firings": 2, "windows": 2, "late_rows": 0,
            "partitions": [{"partition": p, "rows_read": 1, "firings": 1} for p in partitions], **extra}


def test_the_range_report_links_every_partition_report_written_below_it(tmp_path):
    above = tmp_path / "why_report"
    above.mkdir()
    (above / WHY_SUMMARY_FILE).write_text(json.dumps(_summary(["2024-01-01", "2024-01-02"])))
    (above / "index.html").write_text(render(_summary(["2024-01-01", "2024-01-02"])))
    assert "partitions/2024-01-02/index.html" not in (above / "index.html").read_text()
    below = partition_report_dir(above, "2024-01-02")
    below.mkdir(parents=True)
    assert drilled(above) == []  # a folder without its summary is no report (yet)
    (below / WHY_SUMMARY_FILE).write_text(json.dumps(_summary(["2024-01-02"], partition="2024-01-02")))
    link_from_range(below)
    assert drilled(above) == ["2024-01-02"]
    assert json.loads((above / WHY_SUMMARY_FILE).read_text())["drilled"] == ["2024-01-02"]
    assert "href='partitions/2024-01-02/index.html'" in (above / "index.html").read_text()
    page = render(json.loads((below / WHY_SUMMARY_FILE).read_text()))
    assert "Why-report: partition 2024-01-02" in page and "href='../../index.html'" in page


def test_a_partition_report_written_elsewhere_changes_nothing_above_it(tmp_path):
    elsewhere = tmp_path / "mine"
    elsewhere.mkdir()
    link_from_range(elsewhere)  # no range report above: nothing to render, no error
    assert list(tmp_path.iterdir()) == [elsewhere]


def test_a_partition_s_own_report_shows_its_row_as_the_range_has_it(tmp_path):
    above = tmp_path / "why_report"
    above.mkdir()
    day = {"partition": "2024-01-02", "rows_read": 1, "firings": 1, "idle_share": 0.999, "lag_p50_ms": 501.0}
    (above / WHY_SUMMARY_FILE).write_text(json.dumps({"partitions": [{"partition": "2024-01-01"}, day]}))
    alone = {"partition": "2024-01-02", "rows_read": 1, "firings": 1, "idle_share": 0.002, "lag_p50_ms": 555.0}
    assert as_in_range(partition_report_dir(above, "2024-01-02"), [alone]) == [day]
    assert as_in_range(partition_report_dir(above, "2024-01-03"), [{"partition": "2024-01-03"}]) == [
        {"partition": "2024-01-03"}]  # not in the range's report: as it is
    assert as_in_range(tmp_path / "elsewhere", [alone]) == [alone]  # no range's report above it
