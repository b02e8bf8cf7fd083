"""The why-report's "versus live" entry: the comparison next to the report (its sibling `compare/`:
`<output.path>/compare/` for `replay compare`'s default, the run folder's in a DAG run), its diagnosis
(compare.summary.diagnosis: the same as on the compare page and the runs page) and what calibration found
(`_tuning/<grid>/calibration.json`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..compare.summary import diagnosis, read_summary
from ..layout import COMPARE_FOLDER, compare_folder_near
from ..tuning.results import read_results

KEEP = ("output_path", "live", "scope", "mode", "totals", "partitions", "hints", "search", "min_agreement_pct",
        "rules", "not_compared", "config")


def calibrations(output_path: str | Path) -> list[dict[str, Any]]:
    """The grids of `<output_path>/_tuning/` that ran against the live output: verdict and ranking, by grid."""
    out = []
    for r in read_results(str(output_path)):
        cal = r.get("calibration")
        if cal:
            out.append({"grid": r["folder"], "verdict": cal.get("verdict"), "ranking": cal.get("ranking") or [],
                        "live": cal.get("live")})
    return out


def versus_live(report_dir: str | Path, output_path: str) -> dict[str, Any] | None:
    """The why-report's "versus live" entry: the comparison next to the report (the figures its section shows) and
    the calibrations of the outputs; None when neither exists."""
    folder = compare_folder_near(report_dir)
    s = read_summary(folder)
    cals = calibrations(output_path) if "://" not in str(output_path) else []
    if s is None and not cals:
        return None
    entry: dict[str, Any] = {k: s[k] for k in KEEP if k in s} if s else {}
    entry["diagnosis"] = diagnosis(s) if s else None  # the comparison's, as its page and the runs page say it
    entry["page"] = f"../{COMPARE_FOLDER}/index.html" if s else None
    entry["calibrations"] = cals
    return entry
