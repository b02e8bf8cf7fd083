"""Where a comparison's results are, for the reports that show them (the GX live parity suite, the why-report's
"versus live" section): a report folder's sibling `compare/` (`<output.path>/compare/` for `replay compare`'s
default; the run folder's in a DAG run), and what calibration found (`_tuning/<grid>/calibration.json`)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

COMPARE_FOLDER = "compare"
KEEP = ("output_path", "live", "scope", "mode", "totals", "partitions", "hints", "min_agreement_pct", "rules",
        "not_compared", "config")


def compare_folder_near(folder: str | Path) -> Path:
    """The comparison belonging to a report folder (Data Docs, why-report): its sibling `compare/`."""
    return Path(folder).parent / COMPARE_FOLDER


def calibrations(output_path: str | Path) -> list[dict[str, Any]]:
    """The grids of `<output_path>/_tuning/` that ran against the live output: verdict and ranking, by grid."""
    from ..tuning.results import read_results

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
    try:
        s = json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        s = None
    cals = calibrations(output_path) if "://" not in str(output_path) else []
    if s is None and not cals:
        return None
    entry: dict[str, Any] = {k: s[k] for k in KEEP if k in s} if s else {}
    entry["page"] = f"../{COMPARE_FOLDER}/index.html" if s else None
    entry["calibrations"] = cals
    return entry
