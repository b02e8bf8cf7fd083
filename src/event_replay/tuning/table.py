"""The tuning table as people read it: which columns it shows, how a value is written, Markdown and HTML.

No Spark, no matplotlib: the why-report and the Airflow page render results without them."""
from __future__ import annotations

from typing import Any, Sequence

from ..compare.summary import pct
from ..html_page import table

# The short table (Markdown, HTML, the Airflow page): headers for people.
DISPLAY = [("variant", "variant"), ("late_rows", "late rows"), ("late_share", "late share"),
           ("windows_late_fired", "windows re-fired late"), ("wm_lag_mean_ms", "wm lag mean"),
           ("wm_lag_p99_ms", "wm lag p99"), ("first_fire_delay_mean_ms", "end -> first firing (mean)"),
           ("firings", "firings"), ("windows", "windows"),  # as the why-report and the run report count them
           ("late_rows_by_cause", "late rows by cause (split holding the watermark)")]
# Its columns when the grid ran --against-live (calibrate.py).
LIVE_DISPLAY = [("live_rank", "rank vs live"), ("live_score", "agreement score"),
                ("live_agreement_pct", "windows agreeing"), ("live_firings_matched", "live firings matched"),
                ("live_late_matched", "live late rows matched")]


def ms_text(v: float | int | None) -> str:
    if v is None:
        return "-"
    return f"{v / 1000:.2f} s" if abs(v) >= 1000 else f"{v:.0f} ms"


def display_value(col: str, v: Any) -> str:
    if v is None:
        return "-"
    if col == "late_share":
        return f"{v:.3%}"
    if col == "live_score":
        return pct(100 * v)
    if col == "live_agreement_pct":
        return pct(v)
    if col.endswith("_ms") and col not in ("max_out_of_orderness_ms", "idle_timeout_ms", "allowed_lateness_ms"):
        return ms_text(v)
    return str(v)


def display_columns(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """DISPLAY, and the agreement with the live output when the grid ran --against-live."""
    if any("live_score" in r for r in rows):
        return DISPLAY + LIVE_DISPLAY
    return DISPLAY


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    shown = display_columns(rows)
    head = "| " + " | ".join(h for _, h in shown) + " |"
    sep = "| " + " | ".join("---" for _ in shown) + " |"
    body = ["| " + " | ".join(display_value(c, r.get(c)).replace("|", "/") for c, _ in shown) + " |"
            for r in rows]
    return "\n".join([head, sep, *body])


def html_table(rows: Sequence[dict[str, Any]], table_id: str = "tuning") -> str:
    """The tuning table as `replay tune`'s index.html, the why-report and the Replay runs page show it."""
    return table(rows, display_columns(rows), table_id, text=display_value, row_class="variant")
