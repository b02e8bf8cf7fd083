"""Reading a comparison's summary (compare/summary.json, what `compare` returns): one line, and whether it differs.

Plain Python on the summary dict (no Spark, no pandas), so that a caller with only the JSON (make demo's last
lines) does not import them.
"""
from __future__ import annotations

from typing import Any


def pct(v: float | None) -> str:
    """A percentage as the pages and logs show it: two decimals, and more where two would round a share that is not
    100 % to "100.00%" (or one that is not 0 % to "0.00%"): 99.996 is "99.996%"; 100 is "100%"."""
    if v is None:
        return "-"
    if v >= 100:
        return "100%"
    for digits in range(2, 10):
        text = f"{v:.{digits}f}"
        if float(text) < 100 and (float(text) != 0 or v == 0):
            return f"{text}%"
    return "< 100%" if v > 50 else "> 0%"  # within 1e-9 of a bound: said, not rounded onto it


def comparison_line(summary: dict[str, Any]) -> str:
    """The line `replay compare` prints: windows compared and how they differ, agreement, late rows, the page."""
    t = summary["totals"]
    parts = [f"compare: windows compared {t['windows']}, equal {t['agreeing']}, differing {t['differing']} "
             f"(value {t['value_differs']}, replay only {t['replay_only']}, live only {t['live_only']})",
             f"agreement {pct(t['agreement_pct'])}"]
    if t.get("duplicate"):
        parts.append(f"duplicates {t['duplicate']}")
    if "late_matched" in t:
        parts.append(f"late rows matched {t['late_matched']}, replay only {t['late_replay_only']}, "
                     f"live only {t['late_live_only']}")
    return ", ".join(parts) + f" -> {summary.get('page', summary.get('out_dir'))}"


def differs(summary: dict[str, Any]) -> bool:
    t = summary["totals"]
    return bool(t["differing"] or t.get("late_replay_only") or t.get("late_live_only"))


def late_matched_text(r: dict[str, Any]) -> str:
    """`64 of 64`: the live job's late rows the variant also found late, of the live job's late rows; "-" without the
    live late output. (A result written before `live_late` was kept says of how many on either side.)"""
    matched = r.get("live_late_matched")
    if matched is None:
        return "-"
    if r.get("live_late") is not None:
        return f"{matched} of {r['live_late']}"
    return f"{matched} of {r.get('live_late_union')} on either side"
