"""The why-report of a replay, written to `<output.path>/why_report/` (or the folder given): why windows fired when
they did and why rows were late, for the whole replayed range (one scope: range totals, and a row per partition
that adds up to them).

- timelines.png (timelines.py, plot.py), for a range of up to ONE_PANEL partitions or one partition (a longer
  range's are drawn per partition by `--partition`, drill_down.py): watermarks, watermark lag and per-split
  idleness in UTC, zoomed on the spans of the replay clock with traffic, drawn per time bucket (the share of the
  time each split was idle or held the stream, lag percentiles); the buckets' figures in timelines.parquet, the lag's time-weighted mean and p99 over
  the whole replay clock (as the what-if tuning defines them) in the summary.
- holders: which split held the stream's watermark when each window's end was reached: the split whose published
  watermark equalled the stream value W that fired the window's first firing, at the first change that took the
  (non-idle) stream to W; "all-idle jump" when the stream reached W only while every split was idle
  (docs/semantics.md, "Idleness"), "end of input" for a flush firing. Per window in window_holders.parquet (one
  file, in window order: end, start, key), counted per holder in the summary.
- late rows by split and cause: the cause of a late row is the holder of the watermark it saw (the split whose rows
  advanced the stream to it), or "all-idle jump" when the stream had not reached it with a split holding it
  before the row arrived.
- summary.json holds every figure; index.html (page.py) is rendered from it alone.
- what-if tuning (when `replay tune` left results under `<output.path>/_tuning/`): each grid's table and its plot
  (copied next to the report as tuning-<grid>.png), under "tuning" in summary.json.

Everything is aggregated in Spark first; only small tables reach the driver.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import engine
from ..io.files import input_bytes
from ..layout import TUNING_FOLDER, TUNING_PLOT_FILE, WHY_FOLDER, WHY_SUMMARY_FILE
from ..local_folder import write_one_file
from .. import attribution
from ..attribution import ALL_IDLE
from ..quality.prepare import late_events_batch, partition_columns, read_outputs, watermarks_batch, windows_batch
from ..semantics.config import JobConfig, settings_in_words
from ..spark import build_session
from ..spark_jobs import first_rows, gather, one_job_plans
from ..tuning import running
from ..tuning.figures import lag_figures_of, lag_summary
from ..tuning.results import read_results
from .page import render
from .plot import MAX_LANES, figure_size_px, plot, utc
from .drill_down import as_in_range, drilled, link_from_range, partition_report_dir
from .overview import DAY_MS, HOUR_MS, partition_figure_frame, partition_figures, with_figures
from .overview_plot import plot_overview
from .timelines import IDLE, intervals, lag_segments, timeline_frames, timelines_from, traffic_spans
from .versus_live import versus_live

HOLDERS_FILE = "window_holders.parquet"
TIMELINES_FILE = "timelines.parquet"
OVERVIEW_FILE = "overview.png"
END_OF_INPUT = "end of input"
SAMPLE_ROWS = 50
HOLDERS_ORDER = ["window_end", "window_start", "key"]  # the holders file's and its sample's order
# Partitions a range may have and still draw its timelines as one panel (the demo's 3 days, a week): beyond, a day
# is a few pixel columns and its traffic invisible, so each partition's timelines are its drill-down's.
ONE_PANEL = 7
COUNT_COLUMNS = ("rows_read", "rows_in_windows", "late_rows", "quarantined_rows", "skipped_rows", "filtered_rows")

__all__ = ["why_report", "figure_size_px"]


def _window_holders(windows: DataFrame, holders: DataFrame, cfg: JobConfig) -> DataFrame:
    first = windows_batch(windows.where(F.col("fire_index") == 0), cfg).select(
        "key", "window_start", "window_end", "fire_reason", "fire_watermark_ms")
    j = first.join(holders, first.fire_watermark_ms == holders.W, "left")
    who = (F.when(F.col("fire_reason") == "end_of_input", F.lit(END_OF_INPUT))
           .otherwise(F.coalesce(F.col("holder"), F.lit(ALL_IDLE))))
    return j.select("key", "window_start", "window_end", "fire_reason", "fire_watermark_ms", who.alias("held_by"))


def _tuning_entries(output_path: str, report: Path) -> list[dict]:
    """The tuning results of these outputs (event_replay.tuning), their plots copied next to the report."""
    entries = []
    for r in read_results(output_path):
        png = Path(output_path.rstrip("/"), TUNING_FOLDER, r["folder"], r.get("plot") or TUNING_PLOT_FILE)
        copy = f"tuning-{r['folder']}.png"
        if png.is_file():
            shutil.copyfile(png, report / copy)
        entries.append({"name": r["folder"], "grid": r.get("grid"), "rows": r.get("rows", []),
                        "plot": copy if png.is_file() else None})
    return entries


def _label(df: DataFrame) -> Column:
    """The partition of a row (`2024-01-01`, `2024-01-01T05`), null in an unpartitioned output."""
    parts = partition_columns(df)
    # Spark reads `hour=05` back as the integer 5: padded again, so that hours sort and match their ids.
    cols = [F.lpad(F.col(c).cast("string"), 2, "0") if c == "hour" else F.col(c).cast("string") for c in parts]
    return F.concat_ws("T", *cols) if parts else F.lit(None).cast("string")


def _partition_frames(out: dict[str, DataFrame]) -> dict[str, DataFrame]:
    """Per partition the counts/ and the firings of windows/ by reason (a few rows per partition)."""
    counts, windows = out["counts"], out["windows"]
    sums = [F.sum(F.col(c).cast("long")).alias(c) for c in COUNT_COLUMNS if c in counts.columns]
    return {"counts": counts.groupBy(_label(counts).alias("partition")).agg(*sums),
            "firings": windows.groupBy(_label(windows).alias("partition"), "fire_reason")
            .agg(F.count(F.lit(1)).alias("n"))}


def _partitions(found: dict[str, list[dict]]) -> tuple[list[dict], dict[str, int], dict[str, int]]:
    """One row per partition (counts/ and the firings of windows/) and the totals of the range, their sums; the
    firings by reason. An unpartitioned output is one row without a partition name."""
    per = {r["partition"]: r for r in found["counts"]}
    by_reason: dict[str, int] = {}
    for r in found["firings"]:
        row = per.setdefault(r["partition"], {"partition": r["partition"]})
        row["firings"] = row.get("firings", 0) + r["n"]
        by_reason[r["fire_reason"]] = by_reason.get(r["fire_reason"], 0) + r["n"]
    rows = [{**{c: 0 for c in COUNT_COLUMNS}, "firings": 0, **{k: v for k, v in r.items() if v is not None}}
            for _, r in sorted(per.items(), key=lambda kv: str(kv[0]))]
    totals = {c: sum(r[c] for r in rows) for c in COUNT_COLUMNS}
    return rows, totals, by_reason


def _idle_frame(cut: DataFrame) -> DataFrame:
    """Per series: how many times it went idle and for how long (until its next change, or the end), from the
    idle stretches of timelines.intervals. A stretch of no time is no idle period: a split marked idle at the last
    moment of the replay clock, or active again at the same instant, was never idle for a millisecond."""
    spans = (cut.where((F.col("kind") == IDLE) & (F.col("z") > F.col("a")))
             .select("series", (F.col("z") - F.col("a")).alias("d")))
    return spans.groupBy("series").agg(F.count(F.lit(1)).alias("idle_periods"), F.sum("d").alias("idle_ms"))


def _write_buckets(tl, target: Path) -> None:
    """The figures the plot draws, per (span, bucket, series): timelines.parquet."""
    schema = pa.schema([("span", pa.int32()), ("bucket", pa.int32()), ("start_ms", pa.int64()),
                        ("end_ms", pa.int64()), ("series", pa.string()), ("idle_share", pa.float64()),
                        ("held_share", pa.float64()), ("lag_p50_ms", pa.float64()), ("lag_p90_ms", pa.float64()),
                        ("lag_max_ms", pa.int64())])
    pq.write_table(pa.Table.from_pylist(tl.bucket_rows(), schema=schema), target)


def _draw_timelines(found: dict[str, list[dict]], spans: list, splits: list[str], cfg: JobConfig,
                    report: Path) -> dict:
    """timelines.png and timelines.parquet of the spans' figures; what the summary says of them."""
    tl = timelines_from(found, spans, splits)
    w_px, h_px = plot(report / "timelines.png", tl, cfg.watermark.lag_ms)
    _write_buckets(tl, report / TIMELINES_FILE)
    return {"file": "timelines.png", "width": w_px, "height": h_px, "spans": len(tl.spans),
            "split_lanes": min(len(splits), MAX_LANES), "data": TIMELINES_FILE,
            "bucket_ms": [s.bucket_ms() for s in tl.spans]}


def why_report(output_path: str, cfg: JobConfig, spark: SparkSession | None = None,
               report_dir: str | Path | None = None, partition: str | None = None) -> str:
    """Write the why-report of the outputs under `output_path` into `report_dir` (default
    `<output_path>/why_report/`); returns the path of its index.html. With `partition` (a day or hour id): the
    report of that partition alone, by default in `<output_path>/why_report/partitions/<id>/`, which the range's
    report next to it then links (drill_down.py)."""
    if spark is None:
        spark = build_session(app_name="event-replay-why-report", input_bytes=input_bytes(output_path))
    engine.fixed_plans(spark)  # the replay's plans: no re-planning at run time, a Spark job per stage (BENCHMARKS.md)
    report = (Path(report_dir) if report_dir else
              partition_report_dir(Path(output_path.rstrip("/"), WHY_FOLDER), partition) if partition else
              Path(output_path.rstrip("/"), WHY_FOLDER))
    report.mkdir(parents=True, exist_ok=True)
    with one_job_plans(spark):
        summary = _summary(spark, output_path, cfg, report, partition)
    # A report elsewhere than the outputs' own folder (a DAG run's): where `--partition` must draw below it.
    summary["report_dir"] = (str(report.resolve()) if "://" not in str(report) else str(report)) if report_dir else None
    (report / WHY_SUMMARY_FILE).write_text(json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n")
    index = report / "index.html"
    index.write_text(render(summary))
    if partition:
        link_from_range(report)
    return str(index)


def _summary(spark: SparkSession, output_path: str, cfg: JobConfig, report: Path, partition: str | None) -> dict:
    """Every figure of the report (summary.json), its plots and files written into `report` on the way."""
    out = read_outputs(spark, output_path, partition)
    wm = watermarks_batch(out["watermarks"]).cache()
    late = late_events_batch(out["late_events"], cfg)
    windows = out["windows"]
    holders = attribution.holders(wm).cache()

    # Four Spark jobs, whatever the range: the window holders' file, the range's facts (one gather), the traffic
    # spans (which need the replay clock's bounds), then every figure of them (one gather).
    per_window = _window_holders(windows, holders, cfg).cache()
    # Sorted into one partition by a shuffle: the windows are computed (and cached) by every task, not in the
    # writer's one, and the file's order is fixed by the rows (not by the order shuffle blocks arrive in).
    write_one_file(per_window.repartition(1).sortWithinPartitions(*HOLDERS_ORDER), report / HOLDERS_FILE, "parquet")
    facts = wm.agg(F.min("replay_time_ms").alias("t0"), F.max("replay_time_ms").alias("t1"),
                   F.sort_array(F.collect_set(F.when(F.col("scope") == "split", F.col("split")))).alias("splits"),
                   F.max(F.when((F.col("scope") == "stream") & F.col("watermark_ms").isNotNull(),
                                F.col("watermark_ms"))).alias("last_stream"))
    # A row per window (its first firing) is in the holders' table: it counts the windows, unless HAVING dropped
    # some first firings (docs/semantics.md, "HAVING"): then a distinct pass over every written firing does.
    counted = ({"windows": windows.select("key", "window_start", "window_end").distinct()
                .agg(F.count(F.lit(1)).alias("n"))} if cfg.having is not None else {})
    found = gather({
        "facts": facts, **_partition_frames(out), **counted,
        "late_causes": attribution.late_causes(late, holders, not cfg.watermark.periodic),
        "by_holder": per_window.groupBy("held_by").agg(F.count(F.lit(1)).alias("n")),
        "sample": first_rows(per_window, HOLDERS_ORDER, SAMPLE_ROWS)})
    fact = found["facts"][0]
    t0, t1 = (fact["t0"] or 0), (fact["t1"] or 0)
    splits = list(fact["splits"])
    segments = lag_segments(wm, cfg.watermark.lag_ms, t1).cache()
    cut = intervals(wm, holders, t1)
    # One panel for a short range; a longer one is drawn per partition, by its drill-down (ONE_PANEL).
    one_panel = partition is not None or len({r["partition"] for r in found["counts"]}) <= ONE_PANEL
    spans = traffic_spans(wm, t0, t1, pad_ms=2 * (cfg.watermark.idle_timeout_ms or 0)) if one_panel else []
    hourly = "hour" in partition_columns(out["counts"])
    length_ms = HOUR_MS if hourly else DAY_MS
    panel = timeline_frames(wm, holders, spans, t1, segments=segments, cut=cut) if one_panel else {}
    figures_found = gather({**panel, "lag_summary": lag_summary(segments), "idle": _idle_frame(cut),
                            "per_partition": partition_figure_frame(cut, segments, len(splits), length_ms)})
    timelines_png = _draw_timelines(figures_found, spans, splits, cfg, report) if one_panel else None
    if not one_panel:  # a report written into this folder before, of a shorter range, drew them: not these
        for stale in ("timelines.png", TIMELINES_FILE):
            (report / stale).unlink(missing_ok=True)
    lag_mean, lag_p99 = lag_figures_of((figures_found["lag_summary"] or [None])[0])
    idle_stats = {r["series"]: {"idle_periods": r["idle_periods"], "idle_ms": r["idle_ms"]}
                  for r in figures_found["idle"]}

    windows_by_holder = {r["held_by"]: r["n"] for r in found["by_holder"]}
    sample = found["sample"]
    late_causes = sorted(found["late_causes"], key=lambda r: (-r["rows"], str(r["split"]), str(r["cause"])))
    partitions, counts, by_reason = _partitions(found)
    partitions = with_figures(partitions, partition_figures(figures_found["per_partition"], length_ms))
    if partition:  # its row as the range's page shows it (drill_down.py)
        partitions = as_in_range(report, partitions)
    overview_px = plot_overview(report / OVERVIEW_FILE, partitions) if len(partitions) > 1 else None
    n_windows = found["windows"][0]["n"] if counted else sum(windows_by_holder.values())
    late_by_split: dict[str, int] = {}
    for r in late_causes:
        late_by_split[r["split"]] = late_by_split.get(r["split"], 0) + r["rows"]
    summary = {
        "output_path": output_path, "config": settings_in_words(cfg), "counts": counts, "partitions": partitions,
        "firings": sum(by_reason.values()), "firings_by_reason": by_reason, "windows": n_windows, "splits": splits,
        "replay_time_ms": [t0, t1], "replay_time_utc": [utc(t0), utc(t1)],
        "highest_stream_watermark_ms": fact["last_stream"],
        "idle": {s: idle_stats.get(s, {"idle_periods": 0, "idle_ms": 0}) for s in ["stream"] + splits},
        "windows_by_holder": windows_by_holder, "window_holders_file": HOLDERS_FILE, "window_holders_sample": sample,
        "watermark_lag_ms": {"mean": lag_mean, "p99": lag_p99},
        "late_rows": sum(late_by_split.values()), "late_rows_by_split": late_by_split,
        "late_rows_by_split_and_cause": late_causes,
        "spans": [{"start_ms": s.start_ms, "end_ms": s.end_ms, "traffic_ms": list(s.traffic_ms),
                   "start_utc": utc(s.start_ms), "end_utc": utc(s.end_ms)} for s in spans],
        "overview_png": ({"file": OVERVIEW_FILE, "width": overview_px[0], "height": overview_px[1]}
                         if overview_px else None),
        "timelines_png": timelines_png,  # None: drawn per partition (drill_down.py)
        "tuning": _tuning_entries(output_path, report),
        "versus_live": versus_live(report, output_path),  # replay compare's result next to the report, calibration
        "partition": partition, "drilled": drilled(report),  # the partitions with a report of their own below
    }
    for cached in (wm, holders, per_window, segments, cut):
        cached.unpersist()
    running.release()
    return summary
