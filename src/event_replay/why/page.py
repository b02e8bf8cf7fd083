"""The why-report as HTML, rendered from its summary.json alone: the report's own index.html and the Airflow plugin's
page (plugins/replay_runs) are the same page; the plugin adds its navigation and says where the files are served.

One scope throughout: the totals are those of the whole replayed range, and the per-partition table adds up to them.
"""
from __future__ import annotations

import html
from typing import Any

from ..compare.page import versus_live_section
from ..html_page import STYLE, THEME_SCRIPT, cell, table
from ..semantics.durations import spoken_duration
from ..tuning.table import html_table as tuning_table


PARTITION_COLUMNS = [("partition", "partition"), ("rows_read", "rows read"), ("rows_in_windows", "rows in windows"),
                     ("late_rows", "late rows"), ("quarantined_rows", "quarantined"), ("skipped_rows", "skipped"),
                     ("firings", "firings")]
FIGURE_COLUMNS = [("idle_share", "idle"), ("lag_p50_ms", "lag p50"), ("lag_p90_ms", "lag p90"),
                  ("lag_max_ms", "lag max"), ("held_most", "held the stream most")]
LISTED = 31  # partitions listed in full; a longer history lists its worst ones first, the rest in a fold
WORST = 10
FOLDER = "partitions"  # drill_down.FOLDER: the partitions' own reports below the range's
WORST_DRAWN = 5  # a long range's partitions named under "Watermark timelines", with their page or its command


def _figure_text(k: str, v: Any) -> str:
    if v is None:
        return "\u2013"
    if k == "idle_share":  # a partition with any traffic is not idle all the time, nor a stall never
        return ">99%" if 0.995 <= v < 1 else "<1%" if 0 < v < 0.005 else f"{v:.0%}"
    if k.startswith("lag_"):
        return spoken_duration(round(v))
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def _held(p: dict[str, Any]) -> dict[str, Any]:
    share = p.get("held_most_share")
    shown = None if share is None else "<1%" if 0 < share < 0.005 else f"{share:.0%}"  # a moment is not 0%
    return {**p, "held_most": f"{p['held_most']} ({shown})" if p.get("held_most") and shown else p.get("held_most")}


def _drill_down(s: dict[str, Any]) -> str:
    """How to look into one partition (its own timelines), and links to those already written (drill_down.py)."""
    parts = [p.get("partition") for p in s.get("partitions") or [] if p.get("partition")]
    if len(parts) < 2:
        return ""
    done = s.get("drilled") or []
    links = ", ".join(f"<a href='{{base}}partitions/{html.escape(d)}/index.html'>{html.escape(d)}</a>" for d in done)
    return ("<p class='muted' id='drill-down'>One partition's own timelines and causes: "
            f"<code>{html.escape(draw_command(s, parts[0]))}</code> (linked here once written)."
            + (f" Written: {links}." if links else "") + "</p>")


def _partitions(s: dict[str, Any]) -> str:
    """The per-partition table (counts, firings and figures) with the range's total; a long history shows the
    overview figure and its worst partitions by late rows first, every partition in a fold below."""
    parts = [_held(p) for p in s.get("partitions") or []]
    total = {"partition": "total", **(s.get("counts") or {}), "firings": s.get("firings")}
    has_figures = any(p.get("lag_p50_ms") is not None or p.get("idle_share") is not None for p in parts)
    filtered = [("filtered_rows", "filtered")] if (s.get("counts") or {}).get("filtered_rows") else []
    cols = PARTITION_COLUMNS[:-1] + filtered + PARTITION_COLUMNS[-1:] + (FIGURE_COLUMNS if has_figures else [])
    # One partition is its own total: a second row of the same counts (and no figures) only makes a reader compare.
    # (an unpartitioned output's single row has no name: its total says it)
    shown = parts if len(parts) > 1 or (parts and parts[0].get("partition")) else [total]
    full = table(shown, cols, "partitions", total=total if len(parts) > 1 else None, text=_figure_text)
    png = s.get("overview_png")
    figure = (f"<img id='overview-png' src='{{base}}{html.escape(png['file'])}' width='{png['width']}' "
              f"height='{png['height']}' alt='per-partition overview'>" if png else "")
    figure += _drill_down(s)
    if len(parts) <= LISTED:
        return figure + full
    worst = sorted(parts, key=lambda p: (-(p.get("late_rows") or 0), str(p.get("partition"))))[:WORST]
    return (figure + f"<p>The {WORST} partitions with the most late rows:</p>"
            + table(worst, cols, "worst-partitions", text=_figure_text)
            + f"<details id='every-partition'><summary>Every partition ({len(parts):,})</summary>{full}</details>")


def glance(s: dict[str, Any]) -> str:
    """The report in one sentence, from the range totals."""
    c = s.get("counts") or {}
    parts = [p["partition"] for p in s.get("partitions") or [] if p.get("partition")]
    where = (f" over {len(parts)} partitions ({parts[0]} to {parts[-1]})" if len(parts) > 1
             else f" in partition {parts[0]}" if parts else "")
    rows, late = c.get("rows_read") or 0, s.get("late_rows") or 0
    share = f" ({late / rows:.2%} of the rows read)" if rows else ""
    causes: dict[str, int] = {}
    for r in s.get("late_rows_by_split_and_cause") or []:
        causes[r["cause"]] = causes.get(r["cause"], 0) + r["rows"]
    top = max(causes.items(), key=lambda kv: (kv[1], kv[0]))[0] if causes else None
    cause = (f"; most late rows saw a watermark that {'an all-idle jump' if top == 'all-idle jump' else 'split ' + top}"
             f" had set" if top else "")
    return (f"{cell(rows)} rows read{where}: {cell(s.get('firings'))} firings of {cell(s.get('windows'))} windows, "
            f"{cell(late)} late rows{share}{cause}.")


def idle_row(series: str, v: dict[str, Any]) -> dict[str, Any]:
    """A series' line of the idle table: "never idle" rather than a count of periods of no time."""
    periods, ms = v.get("idle_periods") or 0, v.get("idle_ms") or 0
    if not periods or not ms:
        return {"series": series, "idle periods": "never idle", "idle time": "\u2013"}
    return {"series": series, "idle periods": periods, "idle time": spoken_duration(ms)}


def draw_command(s: dict[str, Any], partition: str) -> str:
    """The command that draws `partition`'s own page below this report: `--out` when the report is not the
    outputs' own (a DAG run's is in its run folder)."""
    own = s.get("report_dir")  # set only for a report outside the outputs' own why_report/
    return (f"replay why --config <job config> --partition {partition}"
            + (f" --out {own}/{FOLDER}/{partition}" if own else ""))


def _late_rows(p: dict[str, Any]) -> str:
    n = p.get("late_rows") or 0
    return f"{cell(n)} late row{'' if n == 1 else 's'}"


def _per_partition_timelines(s: dict[str, Any], base: str, lag_line: str) -> str:
    """A long range's timelines: per partition, on its drill-down page (a year in one panel is a grey band)."""
    parts = s.get("partitions") or []
    done = set(s.get("drilled") or [])
    worst = sorted(parts, key=lambda p: (-(p.get("late_rows") or 0), str(p.get("partition"))))[:WORST_DRAWN]
    items = "".join(
        f"<li><a href='{base}partitions/{html.escape(p['partition'])}/index.html'>{html.escape(p['partition'])}</a>"
        f" ({_late_rows(p)})</li>" if p["partition"] in done else
        f"<li>{html.escape(p['partition'])} ({_late_rows(p)}): "
        f"<code>{html.escape(draw_command(s, p['partition']))}</code></li>"
        for p in worst if p.get("partition"))
    others = sorted(done - {p.get("partition") for p in worst})
    more = (" Also drawn: " + ", ".join(f"<a href='{base}partitions/{html.escape(d)}/index.html'>{html.escape(d)}</a>"
                                        for d in others) + "." if others else "")
    return (f"<h2 id='timelines'>Watermark timelines, per partition</h2><p id='timelines-per-partition'>"
            f"{len(parts):,} partitions drawn in one panel would each be a few pixels wide, their traffic invisible: "
            "each partition's timelines (watermarks, lag, idle and holding splits over its own day or hour) are "
            "drawn on its own page, when asked for, with <code>replay why --partition</code>; the overview above "
            f"shows where to look.{lag_line}{more} The partitions with the most late rows:</p>"
            f"<ul id='timeline-pages'>{items}</ul>")


def _timelines(s: dict[str, Any], base: str) -> str:
    png = s.get("timelines_png") or {}
    spans = s.get("spans") or []
    zoom = ("" if len(spans) < 2 else
            f" The replay clock is cut into {len(spans)} spans with traffic (one column each); the silent time "
            "between them is left out.")
    # The stream first, then the splits: summary.json's keys come back sorted when a page is rendered again.
    idle = [idle_row(k, v) for k, v in sorted((s.get("idle") or {}).items(), key=lambda kv: (kv[0] != "stream",
                                                                                              kv[0]))]
    buckets = sorted(set(png.get("bucket_ms") or []))
    bucket = (f" Each panel is cut into time buckets of {' / '.join(spoken_duration(b) for b in buckets)}: what a "
              "bucket shows is true of its whole time." if buckets else "")
    lag = s.get("watermark_lag_ms") or {}
    lag_line = (f" Over the whole replay clock the lag is {spoken_duration(round(lag['mean']))} on average and at most "
                f"{spoken_duration(lag['p99'])} during 99% of the time (time-weighted, as in the what-if tuning)."
                if lag.get("mean") is not None and lag.get("p99") is not None else "")
    if not png:
        return _per_partition_timelines(s, base, lag_line) + _idle_table(s, idle)
    data = png.get("data")
    data_link = (f" The figures of every bucket: <a id='timelines-data' href='{base}{html.escape(data)}'>"
                 f"{html.escape(data)}</a>." if data else "")
    return (f"<h2 id='timelines'>Watermark timelines</h2><p>Top: the stream watermark (black), each split's "
            f"watermark and the newest event time seen (dashed), in UTC. Middle: the watermark lag, newest event time "
            f"seen minus the stream watermark (how far the results trail the data), per bucket: its median (line), "
            f"90th percentile and maximum (bands).{lag_line} Bottom: per split, the share of the bucket's time that "
            f"split held the stream watermark back (orange, from the lane's bottom) and was idle (grey); the "
            f"stream's lane: the share every split was idle at once.{bucket}{zoom}{data_link}</p>"
            f"<img id='timelines-png' src='{base}{html.escape(png.get('file', 'timelines.png'))}' "
            f"width='{png.get('width', '')}' height='{png.get('height', '')}' alt='watermark timelines'>"
            + _idle_table(s, idle))


def _idle_table(s: dict[str, Any], idle: list[dict[str, Any]]) -> str:
    when = s.get("replay_time_utc") or []
    clock = f" ({when[0]} to {when[1]})" if len(when) == 2 else ""
    # A partition's row counts its whole day or hour (drill_down.as_in_range); this table only its own changes.
    own = (" The idle share in the partition's row above is of its whole day or hour, the silence after its "
           "traffic included." if s.get("partition") else "")
    return ((f"<p class='muted'>Idle time per split from the first to the last watermark change{clock}, silent "
             "stretches included (a split is idle once it has sent nothing for the idle timeout; <em>stream</em>: "
             f"every split idle at once).{own}</p>" if idle else "")
            + table(idle, [("series", "split"), ("idle periods", "idle periods"), ("idle time", "idle time")], "idle"))


SAMPLE_SHOWN = 10  # windows of the holders' sample on the page: a glance, the Parquet file has them all


def _holders(s: dict[str, Any], base: str) -> str:
    held = [{"held by": k, "windows": v} for k, v in sorted((s.get("windows_by_holder") or {}).items(),
                                                            key=lambda kv: (-kv[1], kv[0]))]
    sample = s.get("window_holders_sample") or []
    cols = [("key", "key"), ("window_start", "window start"), ("window_end", "window end"),
            ("fire_reason", "fire reason"), ("held_by", "held by")]
    every = s.get("window_holders_file")
    link = (f" Every window (Parquet): <a id='window-holders' href='{base}{html.escape(every)}'>{html.escape(every)}"
            f"</a>." if every else "")
    return ("<h2 id='holders'>Who held the stream when windows reached their end</h2><p>The split whose published "
            "watermark equalled the stream watermark that first fired the window; <em>all-idle jump</em> when every "
            f"split was idle then, <em>end of input</em> for the flush at the end.{link}</p>"
            + table(held, [("held by", "held by"), ("windows", "windows")], "holders-table")
            + (f"<p class='muted'>The first {len(sample[:SAMPLE_SHOWN])} of {cell(s.get('windows'))} windows by end"
               f"{' (every one in the file above)' if every else ''}:</p>"
               + table(sample[:SAMPLE_SHOWN], cols, "holders-sample") if sample else ""))


def _late(s: dict[str, Any]) -> str:
    rows = s.get("late_rows_by_split_and_cause") or []
    return ("<h2 id='late'>Late rows by split and cause</h2><p>Cause: the split whose rows advanced the stream "
            "watermark to the value the late row saw, or the all-idle jump.</p>"
            + table(rows, [("split", "split of the late row"), ("cause", "cause"), ("rows", "rows")], "late-table",
                    total={"split": "total", "rows": s.get("late_rows")}))


def _tuning(s: dict[str, Any], base: str) -> str:
    parts = []
    for i, e in enumerate(s.get("tuning") or []):
        img = (f"<img src='{base}{html.escape(e['plot'])}' alt='late share vs watermark lag'>" if e.get("plot")
               else "")
        parts.append(f"<h3><code>{html.escape(e['name'])}</code></h3>{tuning_table(e.get('rows', []), f'tuning-{i}')}"
                     f"{img}")
    if not parts:
        return ""
    return ("<h2 id='what-if'>What-if tuning</h2><p>The same input replayed under each variant's watermark settings "
            "(<code>replay tune</code>).</p>" + "".join(parts))


def _versus_live(s: dict[str, Any], base: str) -> str:
    return versus_live_section(s.get("versus_live"), base)


def _up(s: dict[str, Any], base: str) -> str:
    return f"<a id='range-report' href='{base}../../index.html'>&uarr; the range's why-report</a>" \
        if s.get("partition") else ""


def render(s: dict[str, Any], nav: str = "", base: str = "") -> str:
    """The page. `nav`: HTML links on top (the plugin's way back to the runs list); `base`: the URL prefix of the
    report folder's files ("" next to index.html)."""
    cfg = s.get("config") or {}
    settings = ", ".join(f"{k} {html.escape(str(v))}" for k, v in cfg.items())
    one = s.get("partition") or len(s.get("partitions") or []) == 1  # a drilled day, a busy hour
    totals = "Totals of the partition" if one else "Totals of the range, per partition"
    return f"""<!doctype html><html><head><meta charset="utf-8"><meta name="color-scheme" content="light dark">
<title>Why-report: {html.escape(str(s.get('output_path', '')))}</title><style>{STYLE}</style>{THEME_SCRIPT}</head><body>
<nav>{nav}{_up(s, base)}</nav><h1>Why-report{': partition ' + html.escape(s['partition']) if s.get('partition') else ''}</h1>
<p class='muted'>Outputs <code>{html.escape(str(s.get('output_path', '')))}</code>{'; ' + settings if settings else ''}.</p>
<p class='glance' id='glance'>{glance(s)}</p>
<h2 id='totals'>{totals}</h2>
<p class='muted'>Per partition: its rows and firings, the share of its time the splits were idle, the watermark lag
(time-weighted over the partition's whole day or hour, silent time included: the timelines below weigh only their own
span) and the split that held the stream watermark longest.</p>
{_partitions(s).replace('{base}', base)}
<p class='muted'>Firings by reason: {', '.join(f'{k} {cell(v)}' for k, v in sorted((s.get('firings_by_reason') or {}).items())) or 'none'};
windows {cell(s.get('windows'))}; splits {cell(len(s.get('splits') or []))}.</p>
{_timelines(s, base)}
{_late(s)}
{_holders(s, base)}
{_versus_live(s, base)}
{_tuning(s, base)}
<p class='muted'>Machine-readable: <a href='{base}summary.json'>summary.json</a>.</p></body></html>
"""
