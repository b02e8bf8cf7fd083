"""The why-report as HTML, rendered from its summary.json alone: the report's own index.html and the Airflow plugin's
page (plugins/replay_runs) are the same page; the plugin adds its navigation and says where the files are served.

One scope throughout: the totals are those of the whole replayed range, and the per-partition table adds up to them.
"""
from __future__ import annotations

import html
from typing import Any, Iterable

# Styled like the Airflow 3 UI the plugin's pages sit in (its Chakra theme tokens: Inter, gray/brand oklch scales,
# bg white/black, fg black/gray.50, border gray.200/gray.800), in its light and dark theme. The theme follows the
# UI's choice (next-themes' localStorage `theme`, same origin inside the UI's frame: THEME_SCRIPT), else the system's.
_LIGHT = ("--fg:#09090b;--bg:#fff;--muted:oklch(.45 .055 251);--line:oklch(.915 .01 253);--head:oklch(.985 .004 253);"
          "--link:oklch(.469 .084 257.657);--ok:oklch(.527 .154 150.069);--bad:oklch(.577 .245 27.325);"
          "--warn:oklch(.553 .195 38.402);--accent:oklch(.575 .08 257.759);--mark:oklch(.962 .012 249.46)")
_DARK = ("--fg:oklch(.985 .004 253);--bg:#09090b;--muted:oklch(.75 .025 252);--line:oklch(.28 .035 251);"
         "--head:oklch(.18 .03 251);--link:oklch(.705 .066 256.378);--ok:oklch(.871 .15 154.449);"
         "--bad:oklch(.704 .191 22.216);--warn:oklch(.837 .128 66.29);--accent:oklch(.705 .066 256.378);"
         "--mark:oklch(.259 .062 265.566)")
STYLE = (f":root{{color-scheme:light;{_LIGHT}}}:root[data-theme=dark]{{color-scheme:dark;{_DARK}}}"
         f"@media (prefers-color-scheme:dark){{:root:not([data-theme=light]){{color-scheme:dark;{_DARK}}}}}" + """
body{font-family:Inter,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em;color:var(--fg);
background:var(--bg);font-size:14px;line-height:1.45}a{color:var(--link);text-decoration:none}a:hover{text-decoration:
underline}h1{font-size:1.5em;font-weight:600}h2{font-size:1.2em;font-weight:600;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid var(--line);padding:4px 10px;text-align:left}
th{background:var(--head);font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{font-weight:600}.muted{color:var(--muted)}nav{margin-bottom:.4em}nav a{margin-right:1.2em}
.glance{font-size:1.1em}img{max-width:100%;height:auto;background:#fff;border-radius:4px}code{font-size:92%}""")
# The Airflow UI's theme (next-themes: localStorage `theme` = light | dark | system), followed live when toggled.
THEME_SCRIPT = """<script>(function(){function apply(){var t=null;try{t=localStorage.getItem('theme')}catch(e){}
if(t==='dark'||t==='light'){document.documentElement.dataset.theme=t}else{delete document.documentElement.dataset.theme}}
apply();window.addEventListener('storage',apply)})()</script>"""


def _fmt(v: Any) -> str:
    if v is None:
        return "&ndash;"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    return html.escape(str(v))


def table(rows: Iterable[dict], cols: list[tuple[str, str]], table_id: str, total: dict | None = None) -> str:
    """cols: (key, heading); numbers right-aligned; an optional total row."""
    def cells(r: dict) -> str:
        return "".join(f"<td class='n'>{_fmt(r.get(k))}</td>" if isinstance(r.get(k), (int, float))
                       and not isinstance(r.get(k), bool) else f"<td>{_fmt(r.get(k))}</td>" for k, _ in cols)
    head = "".join(f"<th>{html.escape(h)}</th>" for _, h in cols)
    body = "".join(f"<tr>{cells(r)}</tr>" for r in rows)
    foot = f"<tr class='total'>{cells(total)}</tr>" if total else ""
    return f"<table id='{table_id}'><thead><tr>{head}</tr></thead><tbody>{body}{foot}</tbody></table>"


def duration(ms: int | None) -> str:
    if ms is None:
        return "-"
    s = ms / 1000
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    if s < 172800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} d"


PARTITION_COLUMNS = [("partition", "partition"), ("rows_read", "rows read"), ("rows_in_windows", "rows in windows"),
                     ("late_rows", "late rows"), ("quarantined_rows", "quarantined"), ("skipped_rows", "skipped"),
                     ("firings", "firings")]


def glance(s: dict[str, Any]) -> str:
    """The report in one sentence, from the range totals."""
    c = s.get("counts") or {}
    parts = [p["partition"] for p in s.get("partitions") or [] if p.get("partition")]
    where = (f" over {len(parts)} partition{'s' if len(parts) != 1 else ''} ({parts[0]} to {parts[-1]})"
             if parts else "")
    rows, late = c.get("rows_read") or 0, s.get("late_rows") or 0
    share = f" ({late / rows:.2%} of the rows read)" if rows else ""
    causes: dict[str, int] = {}
    for r in s.get("late_rows_by_split_and_cause") or []:
        causes[r["cause"]] = causes.get(r["cause"], 0) + r["rows"]
    top = max(causes.items(), key=lambda kv: (kv[1], kv[0]))[0] if causes else None
    cause = (f"; most late rows saw a watermark that {'an all-idle jump' if top == 'all-idle jump' else 'split ' + top}"
             f" had set" if top else "")
    return (f"{_fmt(rows)} rows read{where}: {_fmt(s.get('firings'))} firings of {_fmt(s.get('windows'))} windows, "
            f"{_fmt(late)} late rows{share}{cause}.")


def _timelines(s: dict[str, Any], base: str) -> str:
    png = s.get("timelines_png") or {}
    spans = s.get("spans") or []
    zoom = ("" if len(spans) < 2 else
            f" The replay clock is cut into {len(spans)} spans with traffic (one column each); the silent time "
            "between them is left out.")
    idle = [{"series": k, "idle periods": v.get("idle_periods"), "idle time": duration(v.get("idle_ms"))}
            for k, v in (s.get("idle") or {}).items()]
    buckets = sorted(set(png.get("bucket_ms") or []))
    bucket = (f" Each panel is cut into time buckets of {' / '.join(duration(b) for b in buckets)}: what a bucket "
              "shows is true of its whole time." if buckets else "")
    lag = s.get("watermark_lag_ms") or {}
    lag_line = (f" Over the whole replay clock the lag is {duration(round(lag['mean']))} on average and at most "
                f"{duration(lag['p99'])} during 99% of the time (time-weighted, as in the what-if tuning)."
                if lag.get("mean") is not None and lag.get("p99") is not None else "")
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
            + ("<p class='muted'>Idle time per split over the whole replay clock, silent stretches included (a split is "
               "idle once it has sent nothing for the idle timeout; <em>stream</em>: every split idle at once):</p>"
               if idle else "")
            + table(idle, [("series", "split"), ("idle periods", "idle periods"), ("idle time", "idle time")],
                    "idle"))


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
            + (f"<p class='muted'>The first {len(sample[:SAMPLE_SHOWN])} of {_fmt(s.get('windows'))} windows by end"
               f"{' (every one in the file above)' if every else ''}:</p>"
               + table(sample[:SAMPLE_SHOWN], cols, "holders-sample") if sample else ""))


def _late(s: dict[str, Any]) -> str:
    rows = s.get("late_rows_by_split_and_cause") or []
    return ("<h2 id='late'>Late rows by split and cause</h2><p>Cause: the split whose rows advanced the stream "
            "watermark to the value the late row saw, or the all-idle jump.</p>"
            + table(rows, [("split", "split of the late row"), ("cause", "cause"), ("rows", "rows")], "late-table",
                    total={"split": "total", "rows": s.get("late_rows")}))


def _tuning(s: dict[str, Any], base: str) -> str:
    from ..tuning.runner import html_table as tuning_table  # the tuning table as `replay tune` shows it

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
    from ..compare.page import versus_live_section  # replay compare's result and what calibration found

    return versus_live_section(s.get("versus_live"), base)


def render(s: dict[str, Any], nav: str = "", base: str = "") -> str:
    """The page. `nav`: HTML links on top (the plugin's way back to the runs list); `base`: the URL prefix of the
    report folder's files ("" next to index.html)."""
    c = s.get("counts") or {}
    parts = s.get("partitions") or []
    total = {"partition": "total", **c, "firings": s.get("firings")}
    cfg = s.get("config") or {}
    settings = ", ".join(f"{k} {html.escape(str(v))}" for k, v in cfg.items())
    return f"""<!doctype html><html><head><meta charset="utf-8"><meta name="color-scheme" content="light dark">
<title>Why-report: {html.escape(str(s.get('output_path', '')))}</title><style>{STYLE}</style>{THEME_SCRIPT}</head><body>
<nav>{nav}</nav><h1>Why-report</h1>
<p class='muted'>Outputs <code>{html.escape(str(s.get('output_path', '')))}</code>{'; ' + settings if settings else ''}.</p>
<p class='glance' id='glance'>{glance(s)}</p>
<h2 id='totals'>Totals of the range, per partition</h2>
{table(parts, PARTITION_COLUMNS, 'partitions', total=total) if parts else table([total], PARTITION_COLUMNS, 'partitions')}
<p class='muted'>Firings by reason: {', '.join(f'{k} {_fmt(v)}' for k, v in sorted((s.get('firings_by_reason') or {}).items())) or 'none'};
windows {_fmt(s.get('windows'))}; splits {_fmt(len(s.get('splits') or []))}.</p>
{_timelines(s, base)}
{_late(s)}
{_holders(s, base)}
{_versus_live(s, base)}
{_tuning(s, base)}
<p class='muted'>Machine-readable: <a href='{base}summary.json'>summary.json</a>.</p></body></html>
"""
