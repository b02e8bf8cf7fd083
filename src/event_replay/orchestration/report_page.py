"""The run report as a page (`report.html` beside report.md in the run folder): the same header and table, styled as
every page of the project (html_page.py), its links relative to the run folder: they work from disk and on the
Replay runs page, which serves the run folder's reports (plugins/replay_runs). The totals come first, in one line;
a long history's per-partition table (more than FOLD_ABOVE rows) is folded under them, so a year reads at once."""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from ..html_page import STYLE, THEME_SCRIPT, table
from ..layout import DATASETS, REPORT_MD_FILE
from ..io.output import COUNTS_COLUMNS
from .report import COLUMN_NAMES, COUNT_NAMES, ROWS_NOTE, facts

FOLD_ABOVE = 31  # partitions: a month's table shows open, a longer one folds


def _totals_line(report: dict[str, Any]) -> str:
    """`366 partitions (2024-01-01 to 2024-12-31): 3,592 firings, 396 late rows, ...`."""
    parts = [p["partition"] for p in report["partitions"]]
    span = f" ({parts[0]} to {parts[-1]})" if len(parts) > 1 else (f" ({parts[0]})" if parts else "")
    figures = ", ".join(f"{report['totals'][ds]:,} {COLUMN_NAMES.get(ds, ds)}" for ds in DATASETS)
    return (f"<p id='report-totals'><b>{len(parts):,} partition{'s' if len(parts) != 1 else ''}{html.escape(span)}"
            f"</b>: {html.escape(figures)}.</p>")


def _fact(label: str, text: str, link: str | None) -> str:
    shown = f"<a href='{html.escape(link, quote=True)}'>{html.escape(text)}</a>" if link else html.escape(text)
    return f"<tr><th>{html.escape(label)}</th><td>{shown}</td></tr>"


def render_html(report: dict[str, Any], folder: str | Path) -> str:
    title = f"Replay report {report.get('run_id', '')}".rstrip()
    rows = [{"partition": p["partition"], **{ds: p["rows"][ds] for ds in DATASETS},
             "state": "yes" if p["state"] else "no"} for p in report["partitions"]]
    total = {"partition": "total", **report["totals"], "state": None}
    cols = [("partition", "partition"), *((ds, COLUMN_NAMES.get(ds, ds)) for ds in DATASETS), ("state", "carried state")]
    missing = {p["partition"]: p["missing_outputs"] for p in report["partitions"] if p["missing_outputs"]}
    per_partition = table(rows, cols, 'report-partitions', total)
    if len(rows) > FOLD_ABOVE:
        per_partition = f"<details><summary>Every partition ({len(rows):,})</summary>{per_partition}</details>"
    missing_line = ("<p class='bad' id='missing'>Outputs missing: " + html.escape(
        "; ".join(f"{k}: {', '.join(v)}" for k, v in missing.items())) + "</p>") if missing else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><meta name='color-scheme' content='light dark'>"
            f"<title>{html.escape(title)}</title><style>{STYLE}.bad{{color:var(--bad);font-weight:600}}</style>"
            f"{THEME_SCRIPT}</head><body><h1>Replay report <code>{html.escape(str(report.get('run_id', '')))}"
            f"</code></h1><p class='muted'>{html.escape(str(report.get('dag_id', '')))}</p>"
            f"<table id='facts'>{''.join(_fact(*f) for f in facts(report, folder))}</table>{missing_line}"
            f"<h2>Totals</h2>{_totals_line(report)}<h2>Per partition</h2>{per_partition}"
            "<p class='muted'>Rows of each output dataset, from the Parquet footers: "
            + html.escape(", ".join(f"{COLUMN_NAMES.get(ds, ds)} = {ds}/" for ds in DATASETS))
            + " (a window fired again by a late row has a row per firing). The same report as Markdown: "
            f"<a href='{REPORT_MD_FILE}'>{REPORT_MD_FILE}</a>.</p>{_rows(report)}</body></html>\n")


def _rows(report: dict[str, Any]) -> str:
    """The rows read per partition, each counted once (counts/); nothing for a report that kept no counts."""
    if not report.get("counts"):
        return ""
    rows = [{"partition": p["partition"], **(p.get("counts") or {})} for p in report["partitions"]]
    cols = [("partition", "partition"), *((c, COUNT_NAMES[c]) for c in COUNTS_COLUMNS)]
    return (f"<h2>Rows read</h2>{table(rows, cols, 'report-rows', {'partition': 'total', **report['counts']})}"
            f"<p class='muted'>{html.escape(ROWS_NOTE.replace('`', ''))}</p>")
