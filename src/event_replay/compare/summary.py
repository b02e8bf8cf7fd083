"""Reading a comparison's summary (compare/summary.json, what `compare` returns): one line, and whether it differs.

Plain Python on the summary dict (no Spark, no pandas), so that a caller with only the JSON (make demo's last
lines) does not import them.
"""
from __future__ import annotations

from typing import Any


def summary_line(summary: dict[str, Any]) -> str:
    t = summary["totals"]
    parts = [f"compare: windows compared {t['windows']}, equal {t['agreeing']}, differing {t['differing']} "
             f"(value {t['value_differs']}, replay only {t['replay_only']}, live only {t['live_only']})",
             f"agreement {t['agreement_pct']:.2f}%"]
    if t.get("duplicate"):
        parts.append(f"duplicates {t['duplicate']}")
    if "late_matched" in t:
        parts.append(f"late rows matched {t['late_matched']}, replay only {t['late_replay_only']}, "
                     f"live only {t['late_live_only']}")
    return ", ".join(parts) + f" -> {summary.get('page', summary.get('out_dir'))}"


def differs(summary: dict[str, Any]) -> bool:
    t = summary["totals"]
    return bool(t["differing"] or t.get("late_replay_only") or t.get("late_live_only"))
