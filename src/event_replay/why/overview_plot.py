"""overview.png of the why-report: a long history at a glance, one column per partition (overview.py).

Three strips over the partitions in order, days or hours alike: rows read with the late and quarantined rows on
them; the watermark lag per partition (median line, 90th percentile and maximum marks); the share of the time the
splits were idle. A year of days is 365 thin columns: which days had late rows, a lag peak or idle splits shows
at once; the partition table under it (and each partition's own why-report) says the rest.
"""
from __future__ import annotations

import datetime as dt

import matplotlib
import matplotlib.pyplot as plt

from .plot import DPI, IDLE_COLOR, LAG_COLOR, WIDTH_PX

HEIGHT_PX = 520
ROWS_COLOR, LATE_COLOR, QUARANTINE_COLOR = "0.75", "tab:red", "tab:purple"


def _when(label: str) -> dt.datetime:
    return dt.datetime.strptime(label, "%Y-%m-%dT%H" if "T" in label else "%Y-%m-%d")


def _ticks(labels: list[str], most: int = 12) -> tuple[list[int], list[str]]:
    """At most `most` tick positions, at the first partition of a month (a year of days) or of a day (hours)."""
    if len(labels) <= most:
        return list(range(len(labels))), labels
    hourly = "T" in labels[0]
    key = (lambda s: s[:10]) if hourly else (lambda s: s[:7])
    starts = [i for i, s in enumerate(labels) if i == 0 or key(s) != key(labels[i - 1])]
    step = max(1, -(-len(starts) // most))
    picked = starts[::step]
    return picked, [labels[i][:10] if hourly else _when(labels[i]).strftime("%b %Y") for i in picked]


def plot_overview(path, partitions: list[dict]) -> tuple[int, int]:
    """Draw the partitions' rows (the why-report's summary rows, with overview figures) into `path`; (w, h) px."""
    matplotlib.use("Agg")
    labels = [str(p["partition"]) for p in partitions]
    x = list(range(len(labels)))
    fig, (rows_ax, lag_ax, idle_ax) = plt.subplots(3, 1, sharex=True, figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI),
                                                   dpi=DPI, gridspec_kw={"height_ratios": [2, 1.4, 1]})
    # A gap between columns only while it is a few pixels wide: at a year of days (about 2 px a column) the gaps
    # and the bars' anti-aliased edges drew white stripes, which read as days without rows.
    dense = len(x) > 100
    width = 1.0 if dense else 0.9
    bars = {"linewidth": 0, "antialiased": False} if dense else {}
    rows_ax.bar(x, [p.get("rows_read") or 0 for p in partitions], width, color=ROWS_COLOR, label="rows read", **bars)
    rows_ax.bar(x, [p.get("late_rows") or 0 for p in partitions], width, color=LATE_COLOR, label="late rows", **bars)
    rows_ax.bar(x, [p.get("quarantined_rows") or 0 for p in partitions], width, color=QUARANTINE_COLOR,
                bottom=[p.get("late_rows") or 0 for p in partitions], label="quarantined", **bars)
    rows_ax.set_ylabel("rows")
    rows_ax.legend(loc="lower left", bbox_to_anchor=(0, 1), ncol=3, fontsize=8, frameon=False)
    seconds = [[(p.get(k) / 1000 if p.get(k) is not None else float("nan")) for p in partitions]
               for k in ("lag_p50_ms", "lag_p90_ms", "lag_max_ms")]
    lag_ax.vlines(x, seconds[0], seconds[2], color=LAG_COLOR, alpha=0.25, linewidth=width * 2, label="up to max")
    lag_ax.plot(x, seconds[1], ".", color=LAG_COLOR, markersize=3, label="p90")
    lag_ax.plot(x, seconds[0], "-", color=LAG_COLOR, linewidth=1, label="median")
    lag_ax.set_ylabel("lag (s)")
    defined = [v for v in seconds[2] if v == v and v > 0]
    if defined and max(defined) > 100 * max(min(defined), 1e-3):
        lag_ax.set_yscale("log")  # a day-long lag beside sub-second ones: both must read
    lag_ax.legend(loc="lower left", bbox_to_anchor=(0, 1), ncol=3, fontsize=8, frameon=False)
    idle_ax.bar(x, [p.get("idle_share") or 0 for p in partitions], width, color=IDLE_COLOR, **bars)
    idle_ax.set_ylim(0, 1)
    idle_ax.set_ylabel("idle share")
    ticks, names = _ticks(labels)
    idle_ax.set_xticks(ticks, names, fontsize=8)
    idle_ax.set_xlim(-0.6, len(x) - 0.4)
    first, last = (labels[0], labels[-1]) if labels else ("", "")
    fig.suptitle(f"{len(labels)} partitions, {first} to {last}: rows and late rows, watermark lag, idle splits",
                 fontsize=10, x=0.99, ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return WIDTH_PX, HEIGHT_PX
