"""The backfill's report (orchestration/report.py): rows per output from the Parquet footers, missing outputs
named, a partition's rows read from its counts/ row."""
from __future__ import annotations

import pyarrow.parquet as pq

from event_replay.orchestration.report import build_report, render_markdown
from event_replay.samples.days import generate_days


def test_report_counts_from_footers(tmp_path):
    t = generate_days("2024-03-01", days=1, rows_per_day=50, splits=2)
    (tmp_path / "windows" / "dt=2024-03-01").mkdir(parents=True)
    pq.write_table(t, tmp_path / "windows" / "dt=2024-03-01" / "part-0.parquet")
    r = build_report(str(tmp_path), ["2024-03-01", "2024-03-02"], run_id="x")
    assert r["partitions"][0]["rows"]["windows"] == 50 and r["totals"]["windows"] == 50
    assert "late_events" in r["partitions"][0]["missing_outputs"] and not r["complete"]
    assert "| 2024-03-02 | missing |" in render_markdown(r)


def test_rows_read_of_a_partition(tmp_path):
    """The replay task's log and run record: the rows a partition read, from its counts/ row."""
    import pyarrow as pa

    from event_replay.orchestration.report import partition_rows_read

    (tmp_path / "counts" / "dt=2024-03-01").mkdir(parents=True)
    pq.write_table(pa.table({"rows_read": [120], "quarantined_rows": [2]}),
                   tmp_path / "counts" / "dt=2024-03-01" / "part-0.parquet")
    assert partition_rows_read(tmp_path, "2024-03-01") == 120
    assert partition_rows_read(tmp_path, "2024-03-02") == 0


def _outputs(out, day: str, firings: int) -> None:
    import pyarrow as pa

    from event_replay.layout import DATASETS

    for ds in DATASETS:
        (out / ds / f"dt={day}").mkdir(parents=True)
        pq.write_table(pa.table({"k": list(range(firings if ds == "windows" else 1))}),
                       out / ds / f"dt={day}" / "part-0.parquet")


def test_report_md_and_html_say_firings_and_link_the_comparison(tmp_path):
    """A row of windows/ is a firing: the column says so; a run compared with the live job has a vs-live line that
    links its compare page, in report.md and in report.html beside it, and so do its other reports."""
    import json

    from event_replay.orchestration.report import write_report

    out, run = tmp_path / "out", tmp_path / "out" / "_airflow" / "manual__1"
    _outputs(out, "2024-03-01", firings=268)
    (run / "compare").mkdir(parents=True)
    (run / "compare" / "summary.json").write_text(json.dumps(
        {"totals": {"agreement_pct": 99.6, "windows": 253, "differing": 1}, "min_agreement_pct": 99.0}))
    (run / "_data_docs").mkdir()
    report = build_report(str(out), ["2024-03-01"], run_id="manual__1", dag_id="event_time_backfill",
                          dq="passed (12 expectations)", data_docs=str(run / "_data_docs" / "index.html"))
    json_path, md_path = write_report(report, run)
    md = (run / "report.md").read_text()
    assert "| partition | firings | late rows | watermark rows | quarantined rows | count rows | carried state |" in md, md
    assert "| 2024-03-01 | 268 | 1 | 1 | 1 | 1 | no |" in md, md  # no _state/ folder was written
    assert "- vs live: [99.60% agreement: 1 of 253 windows differ (threshold 99%)](compare/index.html)" in md, md
    assert "- Data Docs: [" in md and "](_data_docs/index.html)" in md, md
    assert json.loads((run / "report.json").read_text())["live"]["agreement_pct"] == 99.6
    page = (run / "report.html").read_text()
    assert "<th>firings</th>" in page and "<td class='n'>268</td>" in page, page
    assert "<a href='compare/index.html'>99.60% agreement: 1 of 253 windows differ (threshold 99%)</a>" in page
    assert "<a href='_data_docs/index.html'>" in page and "<th>windows</th>" not in page


def test_a_failed_report_says_which_steps_passed(tmp_path):
    from event_replay.orchestration.report import failure_line, write_report

    out, run = tmp_path / "out", tmp_path / "out" / "_airflow" / "r"
    _outputs(out, "2024-03-01", firings=3)
    report = build_report(str(out), ["2024-03-01", "2024-03-02"], dq="passed (12 expectations)")
    _, md = write_report(report, run)
    assert failure_line(report, md) == (f"partitions without complete outputs: 2024-03-02 (see {md}); before the "
                                        "report: the replay passed (2 partitions); data quality passed (12 "
                                        "expectations)")
    assert failure_line(build_report(str(out), ["2024-03-01"]), md) is None
