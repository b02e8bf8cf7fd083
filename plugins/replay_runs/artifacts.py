"""What a run left beside its outputs that the runs page links or shows: the comparison with the live output
(`compare/summary.json`), the run record (`run.json`), the why-report's summary and the what-if tuning results
(`_tuning/<grid>/tuning.json`); keys of folders are places.py's."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from event_replay.compare.summary import diagnosis
from event_replay.layout import AIRFLOW_FOLDER, COMPARE_FOLDER, COMPARE_SUMMARY_FILE, RECORD_FILE, TUNING_FOLDER, \
    TUNING_JSON_FILE, WHY_FOLDER, WHY_SUMMARY_FILE

from .places import folder, safe_path
from .progress import read_json


@dataclass(frozen=True)
class LiveAgreement:
    """What the runs page shows of `replay compare`'s result: the agreement % against its threshold."""
    pct: float
    min_pct: float
    windows: int
    differing: int
    diagnosis: str | None = None  # its headline (compare.summary.diagnosis: what every view of it leads with)

    @property
    def ok(self) -> bool:
        return self.pct >= self.min_pct


def live_agreement(folder: Path) -> LiveAgreement | None:
    """`replay compare`'s result in `<folder>/compare/summary.json` (the run's compare_live task or a CLI
    comparison), None when there is none."""
    s = read_json(folder / COMPARE_FOLDER / COMPARE_SUMMARY_FILE)
    t = s.get("totals") or {}
    value = t.get("agreement_pct")
    if not isinstance(value, (int, float)):
        return None
    threshold = s.get("min_agreement_pct")
    found = diagnosis(s)
    return LiveAgreement(float(value), float(threshold) if isinstance(threshold, (int, float)) else 100.0,
                         int(t.get("windows") or 0), int(t.get("differing") or 0),
                         found["headline"] if found else None)


def has_tuning(out: Path) -> bool:
    return (out / TUNING_FOLDER).is_dir() and any((out / TUNING_FOLDER).glob(f"[!.]*/{TUNING_JSON_FILE}"))


def run_record(root: Path, reports: str, outside: Iterable[Path] = ()) -> dict[str, Any] | None:
    """The run record (`run.json`) of an Airflow run folder `<output>/_airflow/<run>` (a key: places.py)."""
    parts = reports.split("/")
    if len(parts) < 2 or parts[-2] != AIRFLOW_FOLDER or any(p in ("", "..", ".") for p in parts):
        return None
    run = folder(root, reports, outside)
    if run is None or not (run / RECORD_FILE).is_file():
        return None
    return read_json(run / RECORD_FILE) or None


def why_summary(root: Path, reports: str, outside: Iterable[Path] = ()) -> dict[str, Any] | None:
    """The summary.json of `<reports>/why_report/` (reports: an output folder, or one of its Airflow run folders)."""
    f = safe_path(root, f"{reports}/{WHY_FOLDER}/{WHY_SUMMARY_FILE}", outside)
    if f is None or not f.is_file():
        return None
    return json.loads(f.read_text())


def tuning_results(root: Path, output: str, outside: Iterable[Path] = ()) -> list[dict[str, Any]]:
    """The what-if tuning results of an output folder (`_tuning/<grid>/tuning.json`), by grid name."""
    grids = safe_path(root, f"{output}/{TUNING_FOLDER}/x", outside)
    if grids is None or not grids.parent.is_dir():
        return []
    results = []
    for f in sorted(grids.parent.glob(f"[!.]*/{TUNING_JSON_FILE}")):
        try:
            results.append({**json.loads(f.read_text()), "folder": f.parent.name})
        except (OSError, ValueError):
            continue
    return results
