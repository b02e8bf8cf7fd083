"""The why-report of a replay, written to `<output.path>/why_report/`: why windows fired when they did and why
rows were late.

- timelines.png: the stream's and each split's watermark over the replay clock (one panel each, the stream on top;
  at most MAX_SPLIT_PANELS splits), idle periods shaded.
- holders: which split held the stream's watermark when each window's end was reached: the split whose published
  watermark equalled the stream value W that fired the window's first firing, at the first change that took the
  (non-idle) stream to W; "all-idle jump" when the stream reached W only while every split was idle (SEMANTICS §4),
  "end of input" for a flush firing. Per window in window_holders/ (CSV), counted per holder in the summary.
- late rows by split and cause: the cause of a late row is the holder of the watermark it saw (the split whose rows
  advanced the stream to it), or "all-idle jump" when the stream had not reached it with a split holding it
  before the row arrived.
- summary.json and index.html tie it together.
- what-if tuning (when `replay tune` left results under `<output.path>/_tuning/`): each grid's table and its plot
  (copied next to the report as tuning-<grid>.png), under "tuning" in summary.json.

Everything is aggregated in Spark first: the timelines are downsampled to TIMELINE_BUCKETS points per series and
idle periods to the same buckets, late rows and holders are grouped; only those small tables reach the driver.
"""
from __future__ import annotations

import html
import json
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..semantics.config import JobConfig
from .prepare import late_events_batch, read_outputs, watermarks_batch, windows_batch

REPORT_FOLDER = "why_report"
TIMELINE_BUCKETS = 600
MAX_SPLIT_PANELS = 16
WIDTH_PX, PANEL_PX, MARGIN_PX, DPI = 1200, 170, 120, 100
ALL_IDLE = "all-idle jump"
END_OF_INPUT = "end of input"
SAMPLE_ROWS = 50
_MIN_PLOT_MS, _MAX_PLOT_MS = -62_135_596_800_000, 253_402_300_799_999


def figure_size_px(n_split_panels: int) -> tuple[int, int]:
    """(width, height) of timelines.png for a number of split panels (the stream has its own panel)."""
    return WIDTH_PX, MARGIN_PX + PANEL_PX * (1 + min(n_split_panels, MAX_SPLIT_PANELS))


def _series(df: DataFrame) -> F.Column:
    return F.when(F.col("scope") == "stream", F.lit("stream")).otherwise(F.col("split"))


def _timelines(wm: DataFrame, t0: int, t1: int):
    """Downsampled (series, bucket, time, watermark) and idle (series, bucket) rows, both bounded by
    series x TIMELINE_BUCKETS."""
    span = max(1, t1 - t0 + 1)

    def bucket(c):
        return F.least(F.lit(TIMELINE_BUCKETS - 1),
                       F.floor((c - F.lit(t0)) * F.lit(TIMELINE_BUCKETS) / F.lit(span)).cast("long"))
    s = wm.withColumn("series", _series(wm))
    points = (s.where(~F.col("idle") & F.col("watermark_ms").between(_MIN_PLOT_MS, _MAX_PLOT_MS))
              .groupBy("series", bucket(F.col("replay_time_ms")).alias("b"))
              .agg(F.min("replay_time_ms").alias("t"), F.max("watermark_ms").alias("w")))
    order = Window.partitionBy("series").orderBy("replay_time_ms", F.col("watermark_ms").asc_nulls_first())
    spans = (s.withColumn("next_t", F.lead("replay_time_ms").over(order))
             .where(F.col("idle"))
             .select("series", F.col("replay_time_ms").alias("a"),
                     F.coalesce(F.col("next_t"), F.lit(t1)).alias("z")))
    idle_stats = spans.groupBy("series").agg(F.count(F.lit(1)).alias("periods"),
                                             F.sum(F.col("z") - F.col("a")).alias("idle_ms"))
    idle_buckets = (spans.select("series", F.explode(F.sequence(bucket(F.col("a")), bucket(F.col("z")))).alias("b"))
                    .distinct())
    return points, idle_buckets, idle_stats


def _holders(wm: DataFrame) -> DataFrame:
    """Per stream value W: the first time the non-idle stream reached it and the split(s) publishing W then."""
    stream = (wm.where((F.col("scope") == "stream") & ~F.col("idle") & F.col("watermark_ms").isNotNull())
              .groupBy(F.col("watermark_ms").alias("W")).agg(F.min("replay_time_ms").alias("e_time")))
    order = Window.partitionBy("split").orderBy("replay_time_ms", F.col("watermark_ms").asc_nulls_first())
    splits = (wm.where(F.col("scope") == "split")
              .withColumn("next_t", F.lead("replay_time_ms").over(order))
              .where(~F.col("idle")))
    cond = ((splits.watermark_ms == stream.W) & (splits.replay_time_ms <= stream.e_time)
            & (splits.next_t.isNull() | (splits.next_t > stream.e_time)))
    held = (stream.join(splits, cond, "left")
            .groupBy("W", "e_time").agg(F.array_join(F.sort_array(F.collect_set("split")), "+").alias("holder")))
    return held.withColumn("holder", F.when(F.col("holder") == "", F.lit(None)).otherwise(F.col("holder")))


def _window_holders(windows: DataFrame, holders: DataFrame, cfg: JobConfig) -> DataFrame:
    first = windows_batch(windows.where(F.col("fire_index") == 0), cfg).select(
        "key", "window_start", "window_end", "fire_reason", "fire_watermark_ms")
    j = first.join(holders, first.fire_watermark_ms == holders.W, "left")
    who = (F.when(F.col("fire_reason") == "end_of_input", F.lit(END_OF_INPUT))
           .otherwise(F.coalesce(F.col("holder"), F.lit(ALL_IDLE))))
    return j.select("key", "window_start", "window_end", "fire_reason", "fire_watermark_ms", who.alias("held_by"))


def _late_causes(late: DataFrame, holders: DataFrame, per_event: bool) -> DataFrame:
    j = late.join(holders, late.late_watermark_ms == holders.W, "left")
    # A tick at the row's arrival comes after the row; with per-event emission a change at the same arrival
    # time can come from an earlier row.
    before = (F.col("e_time") <= F.col("arrival_ms")) if per_event else (F.col("e_time") < F.col("arrival_ms"))
    cause = F.when(F.col("holder").isNotNull() & before, F.col("holder")).otherwise(F.lit(ALL_IDLE))
    return j.groupBy("split", cause.alias("cause")).agg(F.count(F.lit(1)).alias("rows"))


def _plot(path: Path, points, idle, t0: int, splits: list[str]) -> tuple[int, int]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = splits[:MAX_SPLIT_PANELS]
    w_px, h_px = figure_size_px(len(shown))
    fig, axes = plt.subplots(1 + len(shown), 1, figsize=(w_px / DPI, h_px / DPI), dpi=DPI, sharex=True,
                             squeeze=False)
    span = max(1, (max([p[2] for p in points], default=t0) - t0))
    for ax, name in zip(axes[:, 0], ["stream"] + shown):
        pts = sorted((p[2], p[3]) for p in points if p[0] == name)
        if pts:
            ax.step([(t - t0) / 1000 for t, _ in pts], [w / 1000 for _, w in pts], where="post",
                    color="tab:blue" if name == "stream" else "tab:green", lw=1.2)
        for b in sorted(b for s, b in idle if s == name):
            a = b * span / TIMELINE_BUCKETS / 1000
            ax.axvspan(a, a + span / TIMELINE_BUCKETS / 1000, color="0.8", lw=0)
        ax.set_ylabel(f"{name}\nwatermark (s)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel(f"replay time (s after {t0} ms); idle periods shaded")
    fig.suptitle("Watermarks: stream and splits")
    fig.subplots_adjust(left=0.1, right=0.98, top=1 - 40 / h_px, bottom=60 / h_px, hspace=0.35)
    fig.savefig(path, dpi=DPI)  # no bbox_inches="tight": the image keeps its documented size
    plt.close(fig)
    return w_px, h_px


def _table(rows: list[dict], cols: list[str]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(r.get(c)))}</td>" for c in cols) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _tuning_section(output_path: str, report: Path) -> tuple[list[dict], str]:
    """The tuning results of these outputs (event_replay.tuning): summary entries and the HTML section."""
    import shutil

    from ..tuning.runner import PLOT_FILE, TUNING_FOLDER, html_table, read_results

    entries, parts = [], []
    for r in read_results(output_path):
        png = Path(output_path.rstrip("/"), TUNING_FOLDER, r["folder"], r.get("plot") or PLOT_FILE)
        copy = f"tuning-{r['folder']}.png"
        if png.is_file():
            shutil.copyfile(png, report / copy)
        entries.append({"name": r["folder"], "grid": r.get("grid"), "rows": r.get("rows", []),
                        "plot": copy if png.is_file() else None})
        img = f'<img src="{html.escape(copy)}" alt="late share vs watermark lag">' if png.is_file() else ""
        parts.append(f"<h3><code>{html.escape(r['folder'])}</code></h3>{html_table(r.get('rows', []))}{img}")
    if not parts:
        return entries, ""
    return entries, ("<h2>What-if tuning</h2><p>The same input replayed under each variant's watermark settings "
                     "(<code>replay tune</code>); definitions in <code>_tuning/&lt;grid&gt;/tuning.json</code>.</p>"
                     + "".join(parts))


def why_report(output_path: str, cfg: JobConfig, spark: SparkSession | None = None) -> str:
    """Write the why-report of the outputs under `output_path`; returns the path of its index.html."""
    if spark is None:
        from ..spark import build_session
        spark = build_session(app_name="event-replay-why-report")
    out = read_outputs(spark, output_path)
    report = Path(output_path.rstrip("/"), REPORT_FOLDER)
    report.mkdir(parents=True, exist_ok=True)
    wm = watermarks_batch(out["watermarks"]).cache()
    late = late_events_batch(out["late_events"], cfg)
    windows = out["windows"]

    bounds = wm.agg(F.min("replay_time_ms").alias("t0"), F.max("replay_time_ms").alias("t1")).first()
    t0, t1 = (bounds.t0 or 0), (bounds.t1 or 0)
    splits = sorted(r.split for r in wm.where(F.col("scope") == "split").select("split").distinct().collect())
    points_df, idle_df, idle_stats_df = _timelines(wm, t0, t1)
    points = [(r.series, r.b, r.t, r.w) for r in points_df.collect()]
    idle = [(r.series, r.b) for r in idle_df.collect()]
    idle_stats = {r.series: {"idle_periods": r.periods, "idle_ms": r.idle_ms} for r in idle_stats_df.collect()}
    w_px, h_px = _plot(report / "timelines.png", points, idle, t0, splits)

    holders = _holders(wm).cache()
    per_window = _window_holders(windows, holders, cfg)
    per_window.coalesce(1).write.mode("overwrite").option("header", True).csv(str(report / "window_holders"))
    windows_by_holder = {r.held_by: r.n for r in per_window.groupBy("held_by").agg(F.count(F.lit(1)).alias("n"))
                         .collect()}
    sample = [r.asDict() for r in per_window.orderBy("window_end", "window_start", "key").limit(SAMPLE_ROWS)
              .collect()]
    late_causes = [r.asDict() for r in _late_causes(late, holders, not cfg.watermark.periodic)
                   .orderBy("split", "cause").collect()]

    c = out["counts"].first()
    counts = {k: (int(c[k]) if c is not None and c[k] is not None else None)
              for k in ("rows_read", "rows_in_windows", "late_rows", "quarantined_rows", "skipped_rows")}
    by_reason = {r.fire_reason: r.n for r in windows.groupBy("fire_reason").agg(F.count(F.lit(1)).alias("n"))
                 .collect()}
    n_windows = windows.select("key", "window_start", "window_end").distinct().count()
    last_stream = (wm.where((F.col("scope") == "stream") & F.col("watermark_ms").isNotNull())
                   .agg(F.max("watermark_ms").alias("w")).first().w)
    late_by_split: dict[str, int] = {}
    for r in late_causes:
        late_by_split[r["split"]] = late_by_split.get(r["split"], 0) + r["rows"]
    summary = {
        "output_path": output_path, "counts": counts, "firings": sum(by_reason.values()),
        "firings_by_reason": by_reason, "windows": n_windows, "splits": splits,
        "replay_time_ms": [t0, t1], "highest_stream_watermark_ms": last_stream,
        "idle": {s: idle_stats.get(s, {"idle_periods": 0, "idle_ms": 0}) for s in ["stream"] + splits},
        "windows_by_holder": windows_by_holder, "late_rows": sum(late_by_split.values()),
        "late_rows_by_split": late_by_split, "late_rows_by_split_and_cause": late_causes,
        "timelines_png": {"file": "timelines.png", "width": w_px, "height": h_px,
                          "split_panels": min(len(splits), MAX_SPLIT_PANELS)},
    }
    summary["tuning"], tuning_html = _tuning_section(output_path, report)
    (report / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n")
    wm.unpersist()
    holders.unpersist()

    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>Why-report: {html.escape(output_path)}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}</style></head><body>
<h1>Why-report</h1><p>Outputs: <code>{html.escape(output_path)}</code>. Window {html.escape(cfg.window.type)},
allowed lateness {cfg.window.allowed_lateness_ms} ms, watermark {html.escape(cfg.watermark.strategy)}
({html.escape(cfg.watermark.emit)}), end of input {html.escape(cfg.replay.end_of_input)}.</p>
<h2>Summary</h2>{_table([{"measure": k, "value": v} for k, v in [*counts.items(), ("firings", summary["firings"]),
    *[(f"firings ({k})", v) for k, v in sorted(by_reason.items())], ("windows", n_windows),
    ("splits", len(splits)), ("highest stream watermark (ms)", last_stream)]], ["measure", "value"])}
<h2>Watermark timelines</h2><img src="timelines.png" width="{w_px}" height="{h_px}" alt="watermark timelines">
{_table([{"series": s, **summary["idle"][s]} for s in ["stream"] + splits], ["series", "idle_periods", "idle_ms"])}
<h2>Who held the stream when windows reached their end</h2>
<p>The split whose published watermark equalled the stream value that first fired the window
(all windows: <a href="window_holders/">window_holders/</a>, CSV).</p>
{_table([{"held_by": k, "windows": v} for k, v in sorted(windows_by_holder.items())], ["held_by", "windows"])}
<p>First {SAMPLE_ROWS} windows by end:</p>
{_table(sample, ["key", "window_start", "window_end", "fire_reason", "fire_watermark_ms", "held_by"])}
<h2>Late rows by split and cause</h2>
<p>Cause: the split whose rows advanced the stream watermark to the value the late row saw, or the all-idle jump.</p>
{_table(late_causes, ["split", "cause", "rows"])}
{tuning_html}
<p>Machine-readable: <a href="summary.json">summary.json</a>.</p></body></html>
"""
    index = report / "index.html"
    index.write_text(page)
    return str(index)
