"""timelines.png of the why-report: one column per traffic span (timelines.py), three rows of panels:

1. watermarks: the stream's (thick), each split's (thin) and the newest event time seen (dashed), as UTC date-times
   over the replay clock (UTC date-times too);
2. watermark lag: newest event time seen minus the stream watermark, in seconds, per time bucket of the span: the
   median (a line), the 90th percentile and the maximum (bands) of the bucket's time (timelines.py: computed on
   the replay clock in Spark, then bucketed; no source row is read);
3. splits: one lane per split (the stream on top); per bucket, from the lane's bottom up, the share of its time the
   split held the stream's watermark (orange) and the share it was idle (grey; the stream: every split idle). A
   bucket is a few pixels wide: a share is what it can show when who holds the stream changes every tick.
"""
from __future__ import annotations

import datetime as dt
import math

import matplotlib
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from ..semantics.durations import spoken_duration
from .timelines import HELD, IDLE, MAX_PLOT_MS, Timelines

MAX_LANES = 16  # split lanes drawn (the stream's lane comes on top)
MAX_SPLIT_LINES = 10  # split watermark lines drawn in the watermark panel; more would hide the stream
WIDTH_PX, DPI = 1200, 100
TITLE_PX, WATERMARK_PX, LAG_PX, LANE_PX, AXES_PX, LEGEND_PX = 60, 300, 150, 22, 40, 70
IDLE_COLOR, HELD_COLOR, STREAM_COLOR, NEWEST_COLOR = "0.62", "tab:orange", "black", "tab:blue"
LAG_COLOR, LANE_COLOR, LANE_HEIGHT = "tab:red", "0.95", 0.8
UTC = dt.timezone.utc


def figure_size_px(n_splits: int) -> tuple[int, int]:
    """(width, height) of timelines.png for a number of splits (the stream has its own lane)."""
    lanes = 1 + min(n_splits, MAX_LANES)
    return WIDTH_PX, TITLE_PX + WATERMARK_PX + LAG_PX + AXES_PX * 3 + LANE_PX * lanes + LEGEND_PX


def _days(ms: float) -> float:
    """Epoch ms as matplotlib's date number (days since its epoch, 1970-01-01 by default)."""
    return ms / 86_400_000


def utc(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")


def newest_event_time(tl: Timelines, span: int, lag_ms: int) -> list[tuple[int, int]]:
    """(time, newest event time seen) steps of a span: the running highest split watermark + lag_ms."""
    carried = [w for s in tl.splits if (w := tl.carried.get((s, span))) is not None]
    best = max(carried) if carried else None
    highest: dict[int, int] = {}  # several splits publish at one time: one step, the highest
    for s in tl.splits:
        for t, w in tl.series_points(s, span):
            highest[t] = max(w, highest.get(t, w))
    steps = []
    for t, w in sorted(highest.items()):
        if best is None or w > best:
            best = w
            steps.append((t, best + lag_ms))
    if carried:
        steps.insert(0, (tl.spans[span].start_ms, max(carried) + lag_ms))
    return steps


def _with_carry(tl: Timelines, series: str, span: int) -> list[tuple[int, int]]:
    pts = tl.series_points(series, span)
    before = tl.carried.get((series, span))
    return ([(tl.spans[span].start_ms, before)] if before is not None else []) + pts


def lag_steps(tl: Timelines, span: int) -> tuple[list[float], dict[str, list[float]]]:
    """The lag panel's steps of a span: bucket edges (ms; len n + 1) and, per figure (p50, p90, max), its value
    in seconds per bucket (NaN where the lag is undefined: before the stream's first finite watermark, after a
    flush to +inf)."""
    s = tl.spans[span]
    n = s.bucket_count()
    edges = [float(s.bucket_bounds(b)[0]) for b in range(n)] + [float(s.end_ms + 1)]
    values = {k: [math.nan] * n for k in ("p50", "p90", "max")}
    for lb in tl.lag.get(span, []):
        values["p50"][lb.bucket], values["p90"][lb.bucket] = lb.p50_ms / 1000, lb.p90_ms / 1000
        values["max"][lb.bucket] = lb.max_ms / 1000
    return edges, values


def share_steps(tl: Timelines, kind: str, series: str, span: int) -> tuple[list[float], list[float]]:
    """Bucket edges (ms) and the share (0..1) of each bucket's time `series` was idle or held the stream."""
    s = tl.spans[span]
    n = s.bucket_count()
    by_bucket = tl.shares.get((kind, series, span), {})
    return ([float(s.bucket_bounds(b)[0]) for b in range(n)] + [float(s.end_ms + 1)],
            [by_bucket.get(b, 0.0) for b in range(n)])


def _step(ax, steps, **kw) -> None:
    if steps:
        ax.step([_days(t) for t, _ in steps], [v for _, v in steps], where="post", **kw)


def _date_axis(axis) -> None:
    """Ticks as UTC clock times, HH:MM:SS (tenths when the span is a few seconds): the panel's title has the date;
    a span longer than a day gets the date too, MM-DD HH:MM. (matplotlib's concise format writes bare seconds such
    as "05" next to "06:00", which nobody reads as a time.)"""
    axis.set_major_locator(mdates.AutoDateLocator(tz=UTC, minticks=3, maxticks=5))

    def clock(x: float, pos=None) -> str:
        lo, hi = axis.get_view_interval()
        t = mdates.num2date(x, tz=UTC)
        if (hi - lo) * 86400 < 10:
            return t.strftime("%H:%M:%S.%f")[:10]
        return t.strftime("%m-%d %H:%M") if hi - lo > 1 else t.strftime("%H:%M:%S")

    axis.set_major_formatter(FuncFormatter(clock))


def _watermark_panel(ax, tl: Timelines, span: int, lag_ms: int) -> None:
    colors = ["tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:red", "tab:gray"]
    for i, split in enumerate(tl.splits[:MAX_SPLIT_LINES]):
        pts = [(t, _days(w)) for t, w in _with_carry(tl, split, span) if w < MAX_PLOT_MS]
        _step(ax, pts, color=colors[i % len(colors)], lw=0.8, alpha=0.7, label=f"split {split}")
    _step(ax, [(t, _days(w)) for t, w in newest_event_time(tl, span, lag_ms)], color=NEWEST_COLOR, lw=1.2, ls="--",
          label="newest event time seen")
    _step(ax, [(t, _days(w)) for t, w in _with_carry(tl, "stream", span) if w < MAX_PLOT_MS], color=STREAM_COLOR,
          lw=2, label="stream watermark")
    _zoom_values(ax, tl, span, lag_ms)
    _date_axis(ax.yaxis)


def _zoom_values(ax, tl: Timelines, span: int, lag_ms: int) -> None:
    """The y range of what was published inside the span: the value carried in from the day before would
    stretch the axis over the whole silent night (its step then enters from below)."""
    inside = [w for name in ["stream"] + tl.splits for _, w in tl.series_points(name, span) if w < MAX_PLOT_MS]
    if inside:
        lo, hi = _days(min(inside)), _days(max(inside) + lag_ms)
        pad = max((hi - lo) * 0.04, _days(100))
        ax.set_ylim(lo - pad, hi + pad)


def _fill(ax, edges: list[float], lo: list[float], hi: list[float], **kw) -> None:
    """A filled step area over the buckets (each bucket one flat step: the last value is repeated to close it)."""
    x = [_days(e) for e in edges]
    ax.fill_between(x, lo + lo[-1:], hi + hi[-1:], step="post", lw=0, **kw)


def _lanes_panel(ax, tl: Timelines, span: int) -> None:
    """Per lane, from its bottom up: the share of each bucket the split held the stream (orange), then the share
    it was idle (grey); the stream's lane: the share every split was idle."""
    lanes = ["stream"] + tl.splits[:MAX_LANES]
    for y, name in enumerate(lanes):
        edges, held = share_steps(tl, HELD, name, span)
        _, idle = share_steps(tl, IDLE, name, span)
        bottom = [y + LANE_HEIGHT / 2] * len(held)
        top_held = [b - LANE_HEIGHT * h for b, h in zip(bottom, held)]
        top_idle = [t - LANE_HEIGHT * i for t, i in zip(top_held, idle)]
        ax.axhspan(y - LANE_HEIGHT / 2, y + LANE_HEIGHT / 2, color=LANE_COLOR, lw=0)
        _fill(ax, edges, bottom, top_held, color=HELD_COLOR)
        _fill(ax, edges, top_held, top_idle, color=IDLE_COLOR)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_yticks(range(len(lanes)), ["stream (all idle)"] + [f"split {s}" for s in lanes[1:]], fontsize=8)


def _lag_panel(ax, tl: Timelines, span: int) -> None:
    edges, v = lag_steps(tl, span)
    zero = [0.0 if not math.isnan(m) else math.nan for m in v["max"]]
    _fill(ax, edges, zero, v["max"], color=LAG_COLOR, alpha=0.15)
    _fill(ax, edges, zero, v["p90"], color=LAG_COLOR, alpha=0.35)
    x = [_days(e) for e in edges]
    ax.step(x, v["p50"] + v["p50"][-1:], where="post", color=LAG_COLOR, lw=1.2)


def plot(path, tl: Timelines, lag_ms: int) -> tuple[int, int]:
    """Write the figure; returns its (width, height) in pixels."""
    matplotlib.use("Agg")

    w_px, h_px = figure_size_px(len(tl.splits))
    lanes_px = LANE_PX * (1 + min(len(tl.splits), MAX_LANES))
    fig = plt.figure(figsize=(w_px / DPI, h_px / DPI), dpi=DPI)
    grid = fig.add_gridspec(3, len(tl.spans), height_ratios=[WATERMARK_PX, LAG_PX, lanes_px],
                            left=0.12, right=0.98, top=1 - TITLE_PX / h_px, bottom=(AXES_PX + LEGEND_PX) / h_px,
                            hspace=AXES_PX * 3 / (WATERMARK_PX + LAG_PX + lanes_px), wspace=0.25)
    lag_axes = []
    for i, s in enumerate(tl.spans):
        wm_ax = fig.add_subplot(grid[0, i])
        lag_ax = fig.add_subplot(grid[1, i], sharex=wm_ax, sharey=lag_axes[0] if lag_axes else None)
        lane_ax = fig.add_subplot(grid[2, i], sharex=wm_ax)
        lag_axes.append(lag_ax)
        _watermark_panel(wm_ax, tl, i, lag_ms)
        _lag_panel(lag_ax, tl, i)
        _lanes_panel(lane_ax, tl, i)
        wm_ax.set_xlim(_days(s.start_ms), _days(s.end_ms))
        end = utc(s.end_ms)
        wm_ax.set_title(f"{utc(s.start_ms)} to {end[11:] if end[:10] == utc(s.start_ms)[:10] else end} UTC",
                        fontsize=9)
        lane_ax.set_xlabel(f"one bucket = {spoken_duration(s.bucket_ms())}", fontsize=8, loc="left", labelpad=1)
        for ax in (wm_ax, lag_ax, lane_ax):
            _date_axis(ax.xaxis)
            ax.tick_params(labelsize=8)
            ax.grid(alpha=0.3)
        if i == 0:
            wm_ax.set_ylabel("watermark (UTC)", fontsize=9)
            lag_ax.set_ylabel("watermark lag (s)", fontsize=9)
        else:
            lane_ax.set_yticklabels([])
    highest = [m for i in range(len(tl.spans)) for m in lag_steps(tl, i)[1]["max"] if not math.isnan(m)]
    lag_axes[0].set_ylim(0, max(highest) * 1.05 if highest else 1)  # shared by every span's lag panel
    legend = [Patch(color=STREAM_COLOR, label="stream watermark"),
              Patch(color=NEWEST_COLOR, label="newest event time seen"),
              Line2D([], [], color=LAG_COLOR, lw=1.2, label="watermark lag (newest event time - stream): median"),
              Patch(color=LAG_COLOR, alpha=0.45, label="90th percentile"),
              Patch(color=LAG_COLOR, alpha=0.15, label="maximum"),
              Patch(color=IDLE_COLOR, label="share of the time idle"),
              Patch(color=HELD_COLOR, label="share of the time it held the stream watermark")]
    fig.legend(handles=legend, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle("Watermarks over the replay clock (UTC), zoomed on the spans with traffic", fontsize=11)
    fig.savefig(path, dpi=DPI)  # no bbox_inches="tight": the image keeps its documented size
    plt.close(fig)
    return w_px, h_px
