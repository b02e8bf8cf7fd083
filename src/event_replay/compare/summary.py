"""Reading a comparison's summary (compare/summary.json, what `compare` returns): one line, whether it differs, and
its diagnosis: the one every view shows (summary.json's `diagnosis`, the compare page, the why-report's "versus
live" section, the runs page), made by `diagnosis` alone.

Plain Python on the summary dict (no Spark, no pandas), so that a caller with only the JSON (make demo's last
lines) does not import them.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..layout import COMPARE_SUMMARY_FILE


def read_summary(folder: str | Path) -> dict[str, Any] | None:
    """compare/summary.json of a comparison folder, None when there is none (or it is not JSON)."""
    try:
        return json.loads(Path(folder, COMPARE_SUMMARY_FILE).read_text())
    except (OSError, ValueError):
        return None


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
    t = summary.get("totals") or {}  # a summary without a figure (an older or partial one) says nothing differs
    return bool(t.get("differing") or t.get("late_replay_only") or t.get("late_live_only"))


def late_matched_text(r: dict[str, Any]) -> str:
    """`64 of 64`: the live job's late rows the variant also found late, of the live job's late rows; "-" without the
    live late output. (A result written before `live_late` was kept says of how many on either side.)"""
    matched = r.get("live_late_matched")
    if matched is None:
        return "-"
    if r.get("live_late") is not None:
        return f"{matched} of {r['live_late']}"
    return f"{matched} of {r.get('live_late_union')} on either side"


# The hints that name a cause (what differs between the two jobs), as opposed to notes on single windows.
CAUSE_KINDS = ("search", "cause", "split_not_read", "changed_aggregate", "duplicates", "live_only_unread",
               "not_fired_live")


def diagnosis(summary: dict[str, Any]) -> dict[str, Any] | None:
    """What the comparison says differs, as every view shows it: the first hint when it names a cause (the settings
    search's full agreement, a cause with its evidence and confidence, a split never read, ...), its headline (the
    hint's text up to its first colon) and, when the search confirmed it, the cause it confirms. None when the
    replay agrees with the live output or no hint names a cause."""
    hints = summary.get("hints") or []
    duplicated = (summary.get("totals") or {}).get("duplicate")
    if not (differs(summary) or duplicated) or not hints or hints[0].get("kind") not in CAUSE_KINDS:
        return None
    first = hints[0]
    text = first["text"]
    head = text.split(": ", 1)[0] if ": " in text[:200] else text.split(". ", 1)[0]
    out = {"kind": first["kind"], "setting": first.get("setting"), "confidence": first.get("confidence"),
           "headline": head.rstrip("."), "text": text}
    if first["kind"] == "search":
        cause = next((h for h in hints[1:] if h.get("kind") == "cause"), None)
        out["cause"] = cause["text"] if cause else None
    return out
