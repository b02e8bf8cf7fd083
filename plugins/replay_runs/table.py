"""The runs table of the "Replay runs" page: one row per run (runs.RunRow), its cells and their style.

Cells: the run (Airflow run id linked to the UI, DAG, output folder, config, version linked to the run record),
state with why it failed or what a dry run found, start, duration, partitions with the progress, rows read,
firings, late rows, quarantined rows, DQ, links to the reports, and the agreement with the live output.
"""
from __future__ import annotations

import html
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from fastapi import Request

from event_replay.compare.summary import pct
from event_replay.html_page import STYLE
from event_replay.layout import DOCS_FOLDER, REPORT_HTML_FILE
from event_replay.semantics.durations import spoken_duration

from .places import shown
from .runs import RunRow
from .urls import airflow_href, href

TABLE_STYLE = STYLE + """.state{font-weight:600}.state-success,.pass{color:var(--ok);font-weight:600}
.state-failed,.fail{color:var(--bad);font-weight:600}.state-running,.state-queued{color:var(--warn)}
.not-run{color:var(--muted)}tr:target td{background:var(--mark)}td.parts{min-width:12em}
.progress{display:flex;align-items:center;gap:.5em;margin-top:3px;white-space:nowrap}
.bar{display:inline-block;width:6em;height:6px;border-radius:3px;background:var(--line);overflow:hidden}
.bar>span{display:block;height:100%;background:var(--accent)}.state-failed~td .bar>span{background:var(--bad)}
.now{color:var(--warn);font-weight:600}.skipped{color:var(--muted);margin-top:3px}.stopped{color:var(--bad);font-weight:600}.nw{white-space:nowrap}
.step-failed{color:var(--bad);font-weight:600}
td.dq.pending{color:var(--muted)}#runs td{vertical-align:top}td.run-cell{max-width:22em}
a.airflow-run{overflow-wrap:anywhere}.reason{font-weight:400;max-width:18em;margin-top:3px;color:var(--fg)}
td.state-failed .reason{color:var(--bad)}.version{font-size:92%}pre.config{background:var(--head);
border:1px solid var(--line);padding:.6em 1em;border-radius:4px;overflow:auto}
td.live.pass a{color:var(--ok)}td.live.fail a{color:var(--bad)}td.live .muted{font-weight:400}"""


def fmt(v: Any) -> str:
    """A cell: counts with thousands separators (a row count reads at a glance), the rest as it is."""
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return "&ndash;" if v is None else html.escape(str(v))


def _when(t: datetime | None) -> str:
    return "&ndash;" if t is None else t.astimezone(timezone.utc).strftime("<span class='nw'>%Y-%m-%d</span> "
                                                                           "<span class='nw'>%H:%M:%S</span>")


# A task's name on the page (the run's steps under its duration); others as they are
STEP_NAMES = {"replay_partitions": "replay", "replay_partition": "replay", "compare_live": "compare",
              "data_quality": "DQ"}
HIDDEN_STEPS = ("validate", "wait_for_partition", "plan")  # seconds or a sensor's wait: not what a reader compares


def steps_line(r: RunRow) -> str:
    """`replay 25.0 s, calibrate 42.1 s, compare 31.0 s, DQ 19.5 s` under the duration: how long each step after
    the plan took, a failed one marked; empty before the report (the table must fit the frame: one short line)."""
    shown = []
    for s in r.steps:
        if s.get("task") in HIDDEN_STEPS or not isinstance(s.get("seconds"), (int, float)):
            continue
        name = html.escape(STEP_NAMES.get(s["task"], str(s["task"])))
        took = spoken_duration(int(s["seconds"] * 1000))
        failed = s.get("state") in ("failed", "upstream_failed")
        title = html.escape(s.get("line") or s.get("state") or "", quote=True)
        shown.append(f"<span class='step{' step-failed' if failed else ''}' title='{title}'>{name} {took}"
                     f"{' failed' if failed else ''}</span>")
    return f"<br><span class='muted steps'>{', '.join(shown)}</span>" if shown else ""


def _took(r: RunRow) -> str:
    if r.start is not None and r.end is None and r.state in ("running", "queued"):
        start = r.start if r.start.tzinfo else r.start.replace(tzinfo=timezone.utc)
        return spoken_duration(int((datetime.now(timezone.utc) - start).total_seconds() * 1000)) + " so far"
    if r.start is None or r.end is None:
        return "&ndash;"
    return spoken_duration(int((r.end - r.start).total_seconds() * 1000))


def _span(parts: list[str]) -> str:
    return html.escape(", ".join(parts) if len(parts) <= 2 else f"{parts[0]} to {parts[-1]} ({len(parts)})")


def partitions_cell(r: RunRow) -> str:
    """The partitions of the run and, for an Airflow run with a plan, its progress: done / planned, a bar, and the
    partition its replay is on now (running) or stopped in (failed)."""
    if r.planned:
        n, done = len(r.planned), r.done or 0
        if r.waiting and r.state in ("running", "queued", None):  # its turn at the output (runs.turn_notes)
            now = f"<div class='now waiting'>{html.escape(r.waiting)}</div>"
        elif r.current and r.state in ("running", "queued", None):
            now = f"<div class='now'>replaying {html.escape(r.current)}</div>"
        elif r.current and r.state == "failed":
            now = f"<div class='stopped'>stopped in {html.escape(r.current)}</div>"
        elif r.state == "running" and done == n:
            now = ("<div class='now'>writing the report (data quality off)</div>" if r.dq_off else
                   "<div class='now'>checking data quality</div>")
        else:
            now = ""
        share = 100 * done // n
        skipped = "".join(f"<div class='skipped'>{html.escape(line)}</div>" for line in r.committed_by)
        return (f"{_span(r.planned)}<div class='progress' title='partitions replayed / planned'>"
                f"<span class='bar'><span style='width:{share}%'></span></span>"
                f"<span class='done'>{done}/{n} done</span></div>{now}{skipped}")
    parts = r.partitions
    if not parts:
        requested = [p for p in r.extra.get("requested") or [] if p]
        return f"requested {html.escape(' to '.join(requested))}" if requested else "&ndash;"
    if "committed" in r.extra:  # a run without a run folder (a dry run): what its output holds of them now
        return (f"{_span(parts)}<div class='committed'>{r.extra['committed']} of {len(parts)} committed in the "
                f"output</div>")
    return _span(parts)


def _run_cell(request: Request, r: RunRow) -> str:
    """The run id (linked to its Airflow run), then what ran and where it wrote: DAG (or CLI) and output folder,
    and with what: the config and, from its run record, the project's version (linked to the record)."""
    output = f"output <code>{_path(shown(r.output))}</code>" if r.output else "no output yet"
    config = f"config <code>{_path(Path(r.config_file).name)}</code>" if r.config_file else ""
    version = (f"<a class='version' href='{href(request, 'record', r.reports or '')}' title='the run record: version, "
               f"config, input, Spark'>v{html.escape(r.version)}</a>" if r.has_record and r.version else
               (f"<a class='version' href='{href(request, 'record', r.reports or '')}'>run record</a>"
                if r.has_record else ""))
    made = ", ".join(x for x in (config, version) if x)
    made = f"<br><span class='muted made'>{made}</span>" if made else ""
    if not r.run_id:
        return f"CLI<br><span class='muted'>{output}</span>"
    if not r.dag_id:
        return f"{html.escape(r.run_id)}<br><span class='muted'>{output}</span>{made}"
    return (f"<a class='airflow-run' target='_top' href='{airflow_href(request, 'dags', r.dag_id, 'runs', r.run_id)}'>"
            f"{html.escape(r.run_id)}</a><br><span class='muted'>{html.escape(r.dag_id)}, {output}</span>{made}")


def _path(path: str | None) -> str:
    """A path or file name that may wrap after each `/`, `_` and `.` (the run column must leave the table inside the
    Airflow UI's frame at 1400 px: an absolute output path, a long config name)."""
    return re.sub(r"([/_.])", r"\1<wbr>", html.escape(path or "")).removesuffix("<wbr>")


def state_cell(r: RunRow) -> str:
    """The state, and under it why the run failed (or was skipped or cancelled), or what its dry run found."""
    state = r.state or "unknown"
    label = "dry run" if r.dry_run and state == "success" else state
    why = f"<div class='reason'>{html.escape(r.reason)}</div>" if r.reason else ""
    return f"<td class='state state-{html.escape(state)}'>{html.escape(label)}{why}</td>"


def _live_cell(request: Request, r: RunRow) -> str:
    """The agreement with the live job's output (replay compare) against its threshold, linked to the compare page."""
    a = r.live
    if a is None:
        return "<td class='live n' title='not compared with the live output'>&ndash;</td>"
    text = pct(a.pct)
    detail = f"{a.differing:,} of {a.windows:,} windows differ" if a.differing else f"{a.windows:,} windows agree"
    title = f"agreement with the live output: {detail}; threshold {a.min_pct:g}%"
    why = f"<br><span class='muted diagnosis'>{html.escape(a.diagnosis)}</span>" if a.diagnosis else ""
    # The detail wraps (the table must fit the Airflow UI's frame at 1400 px), the percentage does not.
    return (f"<td class='live n {'pass' if a.ok else 'fail'}' title='{html.escape(title, quote=True)}'>"
            f"<a class='nw' href='{href(request, 'files', r.reports or '', 'compare', 'index.html')}'>{text}</a>"
            f"<br><span class='muted'>{html.escape(detail)}</span>{why}</td>")


def runs_table(request: Request, runs: Iterable[RunRow]) -> str:
    head = ("run", "state", "start (UTC)", "duration", "partitions", "rows", "firings", "late rows",
            "quaran&shy;tined", "DQ", "reports", "vs live")
    lines = [f"<table id='runs'><thead><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr></thead><tbody>"]
    for r in runs:
        links = ([f"<a href='{href(request, 'files', r.reports or '', REPORT_HTML_FILE)}'>report</a>"]
                 if r.has_report else []) + \
            ([f"<a href='{href(request, 'why', r.reports or '')}'>why-report</a>"] if r.has_why else []) + \
            ([f"<a href='{href(request, 'files', r.reports or '', DOCS_FOLDER, 'index.html')}'>Data Docs</a>"]
             if r.has_docs else []) + \
            ([f"<a href='{href(request, 'tuning', r.output or '')}'>tuning</a>"] if r.has_tuning else [])
        state = r.state or "unknown"
        dq = "off" if r.dq == "not run" and r.dq_off else (
            "pending" if r.dq == "not run" and state in ("running", "queued") else r.dq)
        num = "<td class='n'>{}</td>".format
        lines.append(
            f"<tr class='run' id='{html.escape(r.anchor)}'><td class='run-cell'>{_run_cell(request, r)}</td>"
            f"{state_cell(r)}"
            f"<td>{_when(r.start)}</td><td>{_took(r)}{steps_line(r)}</td><td class='parts'>{partitions_cell(r)}</td>"
            + "".join(num("&ndash;" if v is None else f"{v:,}") for v in (r.rows_read, r.firings, r.late_rows,
                                                                           r.quarantined))
            + f"<td class='dq {dq.replace(' ', '-')} nw' title='{html.escape(r.dq_detail, quote=True)}'>"
            f"{html.escape(dq)}</td><td class='reports nw'>{'<br>'.join(links) or '&ndash;'}</td>"
            f"{_live_cell(request, r)}</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)
