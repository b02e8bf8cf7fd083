"""Every report after the replay on a job with a row filter, a HAVING, cumulate windows and no key (issue 50,
Deliver 5): a two-day partitioned log without a key column replayed as the backfill DAG does it (one range), then
the data-quality step (GX suites and the why-report), the comparison with a live output (the replay's own firings,
one total changed, without a key column, as a keyless Flink job writes them) and the run report.

On every page, rows read = in windows + late + quarantined + skipped + filtered, with the same numbers as counts/;
the firings every page counts are the written ones (HAVING drops firings, not rows: docs/semantics.md, "HAVING").
Small (a few hundred rows a day), in the session Spark."""
from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.spark

DAYS = ["2024-01-01", "2024-01-02"]
ROWS = ("rows_read", "rows_in_windows", "late_rows", "quarantined_rows", "skipped_rows", "filtered_rows")


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    from pyspark.sql import functions as F

    from event_replay.compare.live_spec import LiveSpec
    from event_replay.compare.replay_side import Scope
    from event_replay.compare.run import CompareOptions, compare
    from event_replay.pipeline import PartitionSpan
    from event_replay.orchestration.report import build_report, write_report
    from event_replay.quality_job import run_quality
    from event_replay.range_replay import run_range
    from event_replay.samples.days import generate_days, write_days
    from event_replay.semantics.config import parse_config

    base = tmp_path_factory.mktemp("keyless")
    write_days(base / "log", generate_days(DAYS[0], len(DAYS), 300, 3, 7, rate=5.0).drop(["key"]))
    cfg = parse_config({
        "source": {"path": str(base / "log"), "splits": ["p0", "p1", "p2"], "columns": {"key": None}},
        "watermark": {"max_out_of_orderness": "500ms", "interval": "200ms", "idle_timeout": "5s"},
        "window": {"type": "cumulate", "size": "20s", "step": "5s", "allowed_lateness": "2s"},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
        "filter": "value > 30", "having": "cnt > 2",
        "replay": {"end_of_input": "flush"}, "output": {"path": str(base / "out")}})
    run_range(spark, cfg, PartitionSpan.between(first_id=DAYS[0], last_id=DAYS[-1], first=True, previous=None,
                                       end_of_input="flush", allow_missing=False), progress=lambda line: None)
    folder = base / "run"
    dq = run_quality(cfg, folder, run_name="keyless", spark=spark)

    windows = spark.read.parquet(str(base / "out" / "windows"))
    first = windows.agg(F.min("window_end")).first()[0]
    changed = F.when(F.col("window_end") == first, F.col("total") + 1).otherwise(F.col("total"))
    windows.withColumn("total", changed).drop("key", "dt").write.json(str(base / "live" / "firings"))
    spark.read.parquet(str(base / "out" / "late_events")).drop("dt").write.json(str(base / "live" / "late"))
    spec = LiveSpec(path=str(base / "live" / "firings"), format="json", late_path=str(base / "live" / "late"),
                    keeps_updates=True)
    summary = compare(spark, cfg, spec, CompareOptions(scope=Scope(DAYS[0], DAYS[-1]),
                                                       out_dir=str(folder / "compare")))
    write_report(build_report(cfg.output.path, DAYS, run_id="keyless", dq="passed"), folder)
    counts = pq.read_table(base / "out" / "counts").to_pandas()
    return {"cfg": cfg, "folder": folder, "dq": dq, "compare": summary, "base": base,
            "counts": {c: int(counts[c].sum()) for c in ROWS}, "firings": windows.count(),
            "per_day": {str(r["dt"]): {c: int(r[c]) for c in ROWS} for _, r in counts.iterrows()}}


def _accounted(n: dict[str, int]) -> bool:
    return n["rows_read"] == sum(n[c] for c in ROWS[1:])


def _text(path: Path) -> str:
    """A page's text without its tags, style and scripts."""
    page = re.sub(r"<(style|script)[^>]*>.*?</\1>", " ", path.read_text(), flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_the_run_filters_rows_and_drops_firings(run):
    n = run["counts"]
    assert _accounted(n) and n["filtered_rows"] > 0 and n["rows_in_windows"] > 0 and n["late_rows"] > 0
    windows = pq.read_table(run["base"] / "out" / "windows").to_pandas()
    assert windows["key"].isna().all() and (windows["cnt"] > 2).all()  # keyless; only firings HAVING keeps


def test_gx_suites_pass_with_the_rows_accounted(run):
    dq = run["dq"]
    assert dq["success"] and dq["failed"] == 0, dq["summary"]
    stored = next((Path(dq["data_docs"]).parent / "results" / "replay_accounting").rglob("*.json"))
    outcomes = {r["expectation_config"]["type"]: r["success"] for r in json.loads(stored.read_text())["results"]}
    assert outcomes["expect_every_row_accounted_for"] and outcomes["expect_no_window_left_open"], outcomes


def test_the_accounting_expectation_fails_without_the_filtered_rows(spark, run, tmp_path):
    """The same outputs, one partition's counts/ row without its filtered rows (as a log filtered beforehand would
    count them): the accounting suite names the broken rule."""
    from event_replay.quality.validation import validate
    from event_replay.semantics.config import parse_config, to_raw

    out = tmp_path / "out"
    shutil.copytree(run["base"] / "out", out)
    day = next((out / "counts" / f"dt={DAYS[0]}").glob("*.parquet"))
    t = pq.read_table(day)
    pq.write_table(t.set_column(t.schema.get_field_index("filtered_rows"), "filtered_rows",
                                pa.array([0] * t.num_rows, t.schema.field("filtered_rows").type)), day)
    day.with_name(f".{day.name}.crc").unlink(missing_ok=True)  # Spark's checksum of the file as it was
    raw = to_raw(run["cfg"])
    raw["output"]["path"] = str(out)
    report = validate(str(out), parse_config(raw), spark=spark, suites=["accounting"], build_docs=False)
    assert report.failed_names() == {"expect_every_row_accounted_for"}


def test_why_report_counts_every_row_and_the_written_firings(run):
    why = run["folder"] / "why_report"
    s = json.loads((why / "summary.json").read_text())
    assert s["counts"] == run["counts"] and s["firings"] == run["firings"]
    written = pq.read_table(run["base"] / "out" / "windows").to_pandas()
    assert s["windows"] == len(written[["key", "window_start", "window_end"]].drop_duplicates())  # every written one
    rows = {p["partition"]: p for p in s["partitions"]}
    for day, n in run["per_day"].items():
        assert {c: rows[day][c] for c in ROWS} == n and _accounted(n)
    text = _text(why / "index.html")
    assert f"{run['counts']['rows_read']:,} rows read" in text and " filtered " in text
    total = re.search(r"total ([\d,]+) ([\d,]+) ([\d,]+) ([\d,]+) ([\d,]+) ([\d,]+) ([\d,]+)", text)
    assert total and [int(x.replace(",", "")) for x in total.groups()[:6]] == [run["counts"][c] for c in ROWS]


def test_compare_matches_a_keyless_live_output_and_counts_every_row(run):
    s = run["compare"]
    t = s["totals"]
    # One window's total changed in the live output: it alone differs; the keyless windows and late rows match.
    assert (t["differing"], t["value_differs"], t["replay_only"], t["live_only"]) == (1, 1, 0, 0), t
    assert t["late_matched"] == run["counts"]["late_rows"] and t["late_replay_only"] == t["late_live_only"] == 0
    assert s["diagnosis"]["kind"] == "changed_aggregate"
    assert s["rows"] == run["counts"]
    n = run["counts"]
    assert (f"Replay rows read {n['rows_read']:,} = {n['rows_in_windows']:,} in windows + {n['late_rows']:,} late + "
            f"{n['quarantined_rows']:,} quarantined + {n['skipped_rows']:,} skipped + {n['filtered_rows']:,} filtered."
            in _text(run["folder"] / "compare" / "index.html"))
    assert "row filter value > 30" in _text(run["folder"] / "compare" / "index.html")


def test_a_keyless_live_output_with_a_key_mapped_is_refused(spark, run):
    from event_replay.compare.live import read_live
    from event_replay.compare.live_spec import CompareInputError, LiveSpec

    spec = LiveSpec(path=str(run["base"] / "live" / "firings"), format="json", columns={"key": "split"})
    with pytest.raises(CompareInputError, match="no key"):
        read_live(spark, spec, run["cfg"], {})


def test_run_report_counts_every_row(run):
    folder, n = run["folder"], run["counts"]
    report = json.loads((folder / "report.json").read_text())
    assert report["counts"] == n and report["totals"]["windows"] == run["firings"]
    assert {p["partition"]: p["counts"] for p in report["partitions"]} == run["per_day"]
    line = (f"rows read {n['rows_read']:,} = {n['rows_in_windows']:,} in windows + {n['late_rows']:,} late + "
            f"{n['quarantined_rows']:,} quarantined + {n['skipped_rows']:,} skipped + {n['filtered_rows']:,} filtered")
    assert line in (folder / "report.md").read_text()
    page = _text(folder / "report.html")
    assert line in page
    assert f"total {' '.join(str(n[c]) for c in ROWS)}" in page
