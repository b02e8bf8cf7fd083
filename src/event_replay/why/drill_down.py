"""One partition's why-report below the range's: `replay why --partition D` writes it into
`<range report>/partitions/<D>/`, and the range's page then links that partition's row to it.

The range's page is rendered again from its summary.json alone (no Spark): its `drilled` list names the partitions
that have a report of their own. The partition's row on its own page is the range's row (`as_in_range`): its idle
share and lag are of its whole day or hour, the silence up to the next partition included, which a report of that
partition's outputs alone cannot see; one row, one set of figures on both pages.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..layout import WHY_SUMMARY_FILE
from .page import FOLDER, render


def partition_report_dir(range_report: Path, partition: str) -> Path:
    return range_report / FOLDER / partition


def drilled(report: Path) -> list[str]:
    """The partitions with a report of their own below `report`."""
    folder = report / FOLDER
    return sorted(p.name for p in folder.iterdir() if (p / WHY_SUMMARY_FILE).is_file()) if folder.is_dir() else []


def link_from_range(partition_report: Path) -> None:
    """Render the range's report above `partition_report` again with its link, if that report is there."""
    above = partition_report.parent.parent
    if partition_report.parent.name != FOLDER or not (above / WHY_SUMMARY_FILE).is_file():
        return
    summary = json.loads((above / WHY_SUMMARY_FILE).read_text())
    summary["drilled"] = drilled(above)
    tmp = above / f".{WHY_SUMMARY_FILE}.tmp"
    tmp.write_text(json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n")
    tmp.replace(above / WHY_SUMMARY_FILE)
    (above / "index.html").write_text(render(summary))


def as_in_range(partition_report: Path, rows: list[dict]) -> list[dict]:
    """The partition's rows as the range's report above `partition_report` has them, if it is there and lists them;
    else `rows` as they are."""
    above = partition_report.parent.parent
    if partition_report.parent.name != FOLDER or not (above / WHY_SUMMARY_FILE).is_file():
        return rows
    theirs = {r.get("partition"): r for r in json.loads((above / WHY_SUMMARY_FILE).read_text()).get("partitions") or []}
    return [theirs.get(r.get("partition"), r) for r in rows]
