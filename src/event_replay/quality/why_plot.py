"""timelines.png of the why-report: one column per traffic span (why_timelines), three rows of panels:

1. watermarks: the stream's (thick), each split's (thin) and the newest event time seen (dashed), as UTC date-times
   over the replay clock (UTC date-times too);
2. watermark lag: newest event time seen minus the stream watermark, in seconds. The newest event time is read off
   the splits' published watermarks (highest split watermark + the strategy's lag, WatermarkConfig.lag_ms), so it is
   known at watermark emission granularity: no source row is read;
3. splits: one lane per split (the stream on top), grey where that split was idle (the stream: all splits idle),
   orange where it held the stream's watermark.
"""
from __future__ import annotations

import datetime as dt
import math

from .why_timelines import HELD, IDLE, MAX_PLOT_MS, SPAN_BUCKETS, Span, Timelines

MAX_LANES = 16  # split lanes drawn (the stream's lane comes on top)
MAX_SPLIT_LINES = 10  # split watermark lines drawn in the watermark panel; more would hide the stream
WIDTH_PX, DPI = 1200, 100
TITLE_PX, WATERMARK_PX, LAG_PX, LANE_PX, AXES_PX, LEGEND_PX = 60, 300, 150, 22, 40, 70
IDLE_COLOR, HELD_COLOR, STREAM_COLOR, NEWEST_COLOR = "0.75", "tab:orange", "black", "tab:blue"
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


def watermark_lag(tl: Timelines, span: int, lag_ms: int) -> list[tuple[int, float]]:
    """(time, lag in seconds) steps of a span; NaN where the stream is idle or has no finite watermark yet."""
    s = tl.spans[span]
    idle = set(tl.stretches.get((IDLE, "stream", span), []))
    events = sorted([(t, 0, w) for t, w in newest_event_time(tl, span, lag_ms)]
                    + [(t, 1, w) for t, w in _with_carry(tl, "stream", span)])
    newest = stream = None
    out = []
    for t, kind, w in events:
        if kind == 0:
            newest = w
        else:
            stream = w
        bucket = min(SPAN_BUCKETS - 1, int((t - s.start_ms) / s.bucket_ms()))
        ok = newest is not None and stream is not None and stream < MAX_PLOT_MS and bucket not in idle
        out.append((t, (newest - stream) / 1000 if ok else math.nan))
    return out


def _runs(buckets: list[int]) -> list[tuple[int, int]]:
    """Consecutive bucket indexes as (first, count)."""
    runs: list[tuple[int, int]] = []
    for b in buckets:
        if runs and runs[-1][0] + runs[-1][1] == b:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((b, 1))
    return runs


def _bars(tl: Timelines, kind: str, series: str, span: int) -> list[tuple[float, float]]:
    s: Span = tl.spans[span]
    step = s.bucket_ms()
    return [(_days(s.start_ms + b * step), _days(n * step)) for b, n in _runs(tl.stretches.get((kind, series, span), []))]


def _step(ax, steps, **kw) -> None:
    if steps:
        ax.step([_days(t) for t, _ in steps], [v for _, v in steps], where="post", **kw)


def _date_axis(axis) -> None:
    """Ticks as UTC clock times, HH:MM:SS (tenths when the span is a few seconds): the panel's title has the date.
    (matplotlib's concise format writes bare seconds such as "05" next to "06:00", which nobody reads as a time.)"""
    import matplotlib.dates as mdates
    from matplotlib.ticker import FuncFormatter

    axis.set_major_locator(mdates.AutoDateLocator(tz=UTC, minticks=3, maxticks=5))

    def clock(x: float, pos=None) -> str:
        lo, hi = axis.get_view_interval()
        t = mdates.num2date(x, tz=UTC)
        return t.strftime("%H:%M:%S.%f")[:10] if (hi - lo) * 86400 < 10 else t.strftime("%H:%M:%S")

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


def _lanes_panel(ax, tl: Timelines, span: int) -> None:
    lanes = ["stream"] + tl.splits[:MAX_LANES]
    for y, name in enumerate(lanes):
        ax.broken_barh(_bars(tl, IDLE, name, span), (y - 0.4, 0.8), color=IDLE_COLOR, lw=0)
        ax.broken_barh(_bars(tl, HELD, name, span), (y - 0.4, 0.8), color=HELD_COLOR, lw=0)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_yticks(range(len(lanes)), ["stream (all idle)"] + [f"split {s}" for s in lanes[1:]], fontsize=8)


def plot(path, tl: Timelines, lag_ms: int) -> tuple[int, int]:
    """Write the figure; returns its (width, height) in pixels."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

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
        lag = watermark_lag(tl, i, lag_ms)
        _step(lag_ax, lag, color="tab:red", lw=1)
        if lag:
            lag_ax.fill_between([_days(t) for t, _ in lag], [v for _, v in lag], step="post", color="tab:red",
                                alpha=0.2, lw=0)
        _lanes_panel(lane_ax, tl, i)
        wm_ax.set_xlim(_days(s.start_ms), _days(s.end_ms))
        wm_ax.set_title(f"{utc(s.start_ms)} to {utc(s.end_ms)[11:]} UTC", fontsize=9)
        for ax in (wm_ax, lag_ax, lane_ax):
            _date_axis(ax.xaxis)
            ax.tick_params(labelsize=8)
            ax.grid(alpha=0.3)
        if i == 0:
            wm_ax.set_ylabel("watermark (UTC)", fontsize=9)
            lag_ax.set_ylabel("watermark lag (s)", fontsize=9)
        else:
            lane_ax.set_yticklabels([])
    legend = [Patch(color=STREAM_COLOR, label="stream watermark"),
              Patch(color=NEWEST_COLOR, label="newest event time seen"),
              Patch(color="tab:red", alpha=0.5, label="watermark lag = newest event time - stream watermark"),
              Patch(color=IDLE_COLOR, label="idle"), Patch(color=HELD_COLOR, label="held the stream watermark")]
    fig.legend(handles=legend, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.suptitle("Watermarks over the replay clock (UTC), zoomed on the spans with traffic", fontsize=11)
    fig.savefig(path, dpi=DPI)  # no bbox_inches="tight": the image keeps its documented size
    plt.close(fig)
    return w_px, h_px
