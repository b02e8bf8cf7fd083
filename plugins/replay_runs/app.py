"""The FastAPI app of the "Replay runs" page, mounted by Airflow's API server at URL_PREFIX.

Every route depends on Airflow's own authentication (`requires_authenticated()`: the JWT of Airflow's auth manager,
as a Bearer header or the UI's `_token` cookie). An unauthenticated browser (Accept: text/html) is sent to Airflow's
login page; any other client gets the 401/403 of the dependency.
"""
from __future__ import annotations

import html
import mimetypes
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import quote

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from airflow.api_fastapi.core_api.security import requires_authenticated

from event_replay.compare.summary import pct
from event_replay.html_page import STYLE, THEME_SCRIPT
from event_replay.layout import AIRFLOW_FOLDER, DOCS_FOLDER, TUNING_FOLDER, TUNING_PLOT_FILE, WHY_FOLDER, \
    WHY_SUMMARY_FILE
from event_replay.semantics.durations import spoken_duration
from event_replay.tuning.table import html_table
from event_replay.why.page import render

from .dagruns import fetch_dag_runs, merge
from .runs import RunRow, list_runs, run_record, runs_root, safe_path, safe_run_id, tuning_results, why_summary

URL_PREFIX = "/replay-runs"

_STYLE = STYLE + """.state{font-weight:600}.state-success,.pass{color:var(--ok);font-weight:600}
.state-failed,.fail{color:var(--bad);font-weight:600}.state-running,.state-queued{color:var(--warn)}
.not-run{color:var(--muted)}tr:target td{background:var(--mark)}td.parts{min-width:12em}
.progress{display:flex;align-items:center;gap:.5em;margin-top:3px;white-space:nowrap}
.bar{display:inline-block;width:6em;height:6px;border-radius:3px;background:var(--line);overflow:hidden}
.bar>span{display:block;height:100%;background:var(--accent)}.state-failed~td .bar>span{background:var(--bad)}
.now{color:var(--warn);font-weight:600}.stopped{color:var(--bad);font-weight:600}.nw{white-space:nowrap}
td.dq.pending{color:var(--muted)}#runs td{vertical-align:top}td.run-cell{max-width:22em}
a.airflow-run{overflow-wrap:anywhere}.reason{font-weight:400;max-width:18em;margin-top:3px;color:var(--fg)}
td.state-failed .reason{color:var(--bad)}.version{font-size:92%}pre.config{background:var(--head);
border:1px solid var(--line);padding:.6em 1em;border-radius:4px;overflow:auto}
td.live.pass a{color:var(--ok)}td.live.fail a{color:var(--bad)}"""


def _page(title: str, body: str) -> HTMLResponse:
    return HTMLResponse(f"""<!doctype html><html><head><meta charset="utf-8"><meta name="color-scheme"
content="light dark"><title>{html.escape(title)}</title><style>{_STYLE}</style>{THEME_SCRIPT}</head>
<body>{body}</body></html>""")


def _fmt(v: Any) -> str:
    """A cell: counts with thousands separators (a row count reads at a glance), the rest as it is."""
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return "&ndash;" if v is None else html.escape(str(v))


def _href(request: Request, *parts: str) -> str:
    """A link inside this app, relative to where it is mounted (root_path includes any Airflow base path)."""
    return request.scope.get("root_path", "").rstrip("/") + "/" + "/".join(quote(p, safe="/") for p in parts)


def _airflow_href(request: Request, *parts: str) -> str:
    """A page of the Airflow UI: the app is mounted at <base>/replay-runs, the UI lives at <base>/."""
    root = request.scope.get("root_path", "").rstrip("/")
    base = root[: -len(URL_PREFIX)] if root.endswith(URL_PREFIX) else ""
    return base + "/" + "/".join(quote(p, safe="") for p in parts)


def _nav(request: Request, row: RunRow | None = None) -> str:
    links = [f"<a id='runs-link' href='{_href(request)}'>&larr; Replay runs</a>"]
    if row is not None and row.dag_id and row.run_id:
        links.append(f"<a target='_top' href='{_airflow_href(request, 'dags', row.dag_id, 'runs', row.run_id)}'>"
                     f"Airflow run {html.escape(row.run_id)}</a>")
    if row is not None and row.has_docs:
        links.append(f"<a href='{_href(request, 'files', row.reports or '', DOCS_FOLDER, 'index.html')}'>Data Docs</a>")
    return " ".join(links)


def _when(t: datetime | None) -> str:
    return "&ndash;" if t is None else t.astimezone(timezone.utc).strftime("<span class='nw'>%Y-%m-%d</span> "
                                                                           "<span class='nw'>%H:%M:%S</span>")


def _took(r: RunRow) -> str:
    if r.start is not None and r.end is None and r.state in ("running", "queued"):
        start = r.start if r.start.tzinfo else r.start.replace(tzinfo=timezone.utc)
        return spoken_duration(int((datetime.now(timezone.utc) - start).total_seconds() * 1000)) + " so far"
    if r.start is None or r.end is None:
        return "&ndash;"
    return spoken_duration(int((r.end - r.start).total_seconds() * 1000))


def _span(parts: list[str]) -> str:
    return html.escape(", ".join(parts) if len(parts) <= 2 else f"{parts[0]} to {parts[-1]} ({len(parts)})")


def _partitions(r: RunRow) -> str:
    """The partitions of the run and, for an Airflow run with a plan, its progress: done / planned, a bar, and the
    partition its replay is on now (running) or stopped in (failed)."""
    if r.planned:
        n, done = len(r.planned), r.done or 0
        if r.current and r.state in ("running", "queued", None):
            now = f"<div class='now'>replaying {html.escape(r.current)}</div>"
        elif r.current and r.state == "failed":
            now = f"<div class='stopped'>stopped in {html.escape(r.current)}</div>"
        elif r.state == "running" and done == n:
            now = ("<div class='now'>writing the report (data quality off)</div>" if r.dq_off else
                   "<div class='now'>checking data quality</div>")
        else:
            now = ""
        pct = 100 * done // n
        return (f"{_span(r.planned)}<div class='progress' title='partitions replayed / planned'>"
                f"<span class='bar'><span style='width:{pct}%'></span></span>"
                f"<span class='done'>{done}/{n} done</span></div>{now}")
    parts = r.partitions
    if not parts:
        requested = [p for p in r.extra.get("requested") or [] if p]
        return f"requested {html.escape(' to '.join(requested))}" if requested else "&ndash;"
    return _span(parts)


def _run_cell(request: Request, r: RunRow) -> str:
    """The run id (linked to its Airflow run), then what ran and where it wrote: DAG (or CLI) and output folder,
    and with what: the config and, from its run record, the project's version (linked to the record)."""
    output = f"output <code>{_fmt(r.output)}</code>" if r.output else "no output yet"
    config = f"config <code>{html.escape(Path(r.config_file).name)}</code>" if r.config_file else ""
    version = (f"<a class='version' href='{_href(request, 'record', r.reports or '')}' title='the run record: version, "
               f"config, input, Spark'>v{html.escape(r.version)}</a>" if r.has_record and r.version else
               (f"<a class='version' href='{_href(request, 'record', r.reports or '')}'>run record</a>"
                if r.has_record else ""))
    made = ", ".join(x for x in (config, version) if x)
    made = f"<br><span class='muted made'>{made}</span>" if made else ""
    if not r.run_id:
        return f"CLI<br><span class='muted'>{output}</span>"
    if not r.dag_id:
        return f"{html.escape(r.run_id)}<br><span class='muted'>{output}</span>{made}"
    return (f"<a class='airflow-run' target='_top' href='{_airflow_href(request, 'dags', r.dag_id, 'runs', r.run_id)}'>"
            f"{html.escape(r.run_id)}</a><br><span class='muted'>{html.escape(r.dag_id)}, {output}</span>{made}")


def _state_cell(r: RunRow) -> str:
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
    return (f"<td class='live n nw {'pass' if a.ok else 'fail'}' title='{html.escape(title, quote=True)}'>"
            f"<a href='{_href(request, 'files', r.reports or '', 'compare', 'index.html')}'>{text}</a>"
            f"<br><span class='muted'>{html.escape(detail)}</span></td>")


def _runs_table(request: Request, runs: Iterable[RunRow]) -> str:
    head = ("run", "state", "start (UTC)", "duration", "partitions", "rows", "firings", "late rows",
            "quaran&shy;tined", "DQ", "reports", "vs live")
    lines = [f"<table id='runs'><thead><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr></thead><tbody>"]
    for r in runs:
        links = ([f"<a href='{_href(request, 'why', r.reports or '')}'>why-report</a>"] if r.has_why else []) + \
            ([f"<a href='{_href(request, 'files', r.reports or '', DOCS_FOLDER, 'index.html')}'>Data Docs</a>"]
             if r.has_docs else []) + \
            ([f"<a href='{_href(request, 'tuning', r.output or '')}'>tuning</a>"] if r.has_tuning else [])
        state = r.state or "unknown"
        dq = "off" if r.dq == "not run" and r.dq_off else (
            "pending" if r.dq == "not run" and state in ("running", "queued") else r.dq)
        num = "<td class='n'>{}</td>".format
        lines.append(
            f"<tr class='run' id='{html.escape(r.anchor)}'><td class='run-cell'>{_run_cell(request, r)}</td>"
            f"{_state_cell(r)}"
            f"<td>{_when(r.start)}</td><td>{_took(r)}</td><td class='parts'>{_partitions(r)}</td>"
            + "".join(num("&ndash;" if v is None else f"{v:,}") for v in (r.rows_read, r.firings, r.late_rows,
                                                                           r.quarantined))
            + f"<td class='dq {dq.replace(' ', '-')} nw' title='{html.escape(r.dq_detail, quote=True)}'>"
            f"{html.escape(dq)}</td><td class='reports nw'>{'<br>'.join(links) or '&ndash;'}</td>"
            f"{_live_cell(request, r)}</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def all_runs() -> list[RunRow]:
    return merge(list_runs(runs_root()), fetch_dag_runs())


def _tuning_section(request: Request, output: str) -> str:
    """Each what-if grid of an output (`replay tune`): its table and its plot; empty when there is none."""
    parts = []
    for i, r in enumerate(tuning_results(runs_root(), output)):
        plot = r.get("plot") or TUNING_PLOT_FILE
        src = _href(request, "files", output, TUNING_FOLDER, r["folder"], plot)
        csv = _href(request, "files", output, TUNING_FOLDER, r["folder"], "tuning.csv")
        parts.append(f"<h3><code>{html.escape(r['folder'])}</code></h3>{html_table(r.get('rows', []), f'tuning-{i}')}"
                     f"<img class='tuning-plot' src='{src}' alt='late share vs watermark lag'>"
                     f"<p><a href='{csv}'>tuning.csv</a> (all columns)</p>")
    if not parts:
        return ""
    return ("<h2 id='what-if'>What-if tuning</h2><p>The same input replayed under each variant's watermark "
            "settings (<code>replay tune</code>, DAG <code>watermark_tuning</code>).</p>" + "".join(parts))


def _record_page(rec: dict[str, Any], reports: str, folder: Path) -> str:
    """A run record (event_replay.orchestration.record): what ran, with which code and config, on which input."""
    import yaml

    project, config, spark = rec.get("project") or {}, rec.get("config") or {}, rec.get("spark") or {}
    inp = rec.get("input") or {}
    facts = [("run", rec.get("run_id")), ("DAG", rec.get("dag_id")), ("written", rec.get("written")),
             ("project version", project.get("version")),
             ("commit", (project.get("commit") or "-") + (" (with uncommitted changes)" if project.get("dirty") else "")),
             ("config", config.get("file")), ("effective config", config.get("effective")),
             ("Spark", f"{spark.get('version') or '?'} on {spark.get('master') or '?'}"
                       f"{', ' + spark['deploy_mode'] + ' mode' if spark.get('deploy_mode') else ''}"),
             ("input", f"{inp.get('source')}"
                       + (f" (digest {str(inp.get('digest'))[:16]})" if inp.get("listed") else " (not listed)"))]
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{_fmt(v)}</td></tr>" for k, v in facts)
    parts = "".join(
        f"<tr><td>{html.escape(pid)}</td><td>{'missing' if p.get('files') is None else len(p['files'])}</td>"
        f"<td class='n'>{sum(f.get('size', 0) for f in p.get('files') or []):,}</td></tr>"
        for pid, p in (inp.get("partitions") or {}).items())
    jobs = "".join(f"<tr><td class='n'>{j.get('job')}</td><td>{html.escape(', '.join(j.get('partitions') or []))}</td>"
                   f"<td class='n'>{_fmt(j.get('rows_read'))}</td><td class='n'>{_fmt(j.get('seconds'))}</td></tr>"
                   for j in rec.get("jobs") or [])
    resolved = html.escape(yaml.safe_dump(config.get("resolved"), sort_keys=False)) if config.get("resolved") else ""
    return (f"<h1>Run record</h1><table id='record'>{rows}</table>"
            f"<p class='muted'>Would a rerun read the same input? <code>replay verify {html.escape(str(folder))}</code> "
            f"re-checks every file below against the source.</p>"
            f"<h2>Input, per partition</h2><table id='record-input'><thead><tr><th>partition</th><th>files</th>"
            f"<th class='n'>bytes</th></tr></thead><tbody>{parts}</tbody></table>"
            + (f"<h2>Spark jobs</h2><table id='record-jobs'><thead><tr><th>job</th><th>partitions</th>"
               f"<th class='n'>rows read</th><th class='n'>seconds</th></tr></thead><tbody>{jobs}</tbody></table>"
               if jobs else "")
            + (f"<h2>Resolved config</h2><pre class='config' id='record-config'>{resolved}</pre>" if resolved else ""))


_DOCS_NAVBAR = re.compile(r"<nav class=\"navbar[^>]*>")


def _docs_page(request: Request, page: str, reports: str) -> str:
    """A Data Docs page (GX's static HTML) with the way back: its top bar links to the run's row on the runs page
    and to its why-report. Added as the page is served, so a site opened from disk stays GX's own."""
    parts = reports.split("/")
    run = parts[-1] if len(parts) >= 2 and parts[-2] == AIRFLOW_FOLDER else reports
    why = _href(request, "why", reports) if (runs_root() / reports / WHY_FOLDER / WHY_SUMMARY_FILE).is_file() else None
    links = (f"<a id='runs-link' class='btn btn-sm btn-outline-secondary mr-2' href='{_href(request)}#run-"
             f"{html.escape(safe_run_id(run))}'>&larr; Replay runs</a>"
             + (f"<a id='why-link' class='btn btn-sm btn-outline-secondary' href='{why}'>Why-report</a>" if why else ""))
    bar = (f"<div class='order-last ml-auto d-flex align-items-center flex-shrink-0 text-nowrap pl-2' "
           f"id='replay-runs-nav'>{links}</div>")
    m = _DOCS_NAVBAR.search(page)
    if m:  # GX's bar is 70 px high: a result's long breadcrumb (the data asset's name) would spill out of it
        grow = "<style>nav.navbar.sticky-top{height:auto!important;min-height:70px}</style>"
        return page[:m.start()] + grow + page[m.start():m.end()] + bar + page[m.end():]
    return page.replace("<body>", f"<body><nav style='padding:.5em 1em'>{links}</nav>", 1)


def create_app() -> FastAPI:
    app = FastAPI(title="Replay runs", dependencies=[Depends(requires_authenticated())], docs_url=None,
                  redoc_url=None, openapi_url=None)

    @app.exception_handler(HTTPException)
    async def _to_login(request: Request, exc: HTTPException) -> Response:
        # A person in a browser without a valid session: Airflow's login page, then back here.
        if exc.status_code in (401, 403) and "text/html" in request.headers.get("accept", ""):
            try:
                from airflow.api_fastapi.app import get_auth_manager

                return RedirectResponse(get_auth_manager().get_url_login(next_url=str(request.url)), 303)
            except Exception:
                pass
        return Response(content=f'{{"detail": "{exc.detail}"}}', status_code=exc.status_code,
                        media_type="application/json", headers=getattr(exc, "headers", None))

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request) -> HTMLResponse:
        root = runs_root()
        runs = all_runs()
        body = (f"<h1>Replay runs</h1><p id='summary'>{len(runs)} run{'s' if len(runs) != 1 else ''}, newest "
                f"first: those of the backfill DAGs (failed ones too) and the replays found under "
                f"<code>{html.escape(str(root))}</code>. Each run keeps its own reports.</p>"
                + (_runs_table(request, runs) if runs else "<p id='no-runs'>No runs yet.</p>")
                + "<p class='muted'>Where runs are found: the Airflow Variable <code>replay_runs_root</code>, else env "
                  "<code>REPLAY_RUNS_ROOT</code>, else the project's <code>out/</code>.</p>")
        return _page("Replay runs", body)

    @app.get("/why/{reports:path}", response_class=HTMLResponse)
    def why(request: Request, reports: str) -> HTMLResponse:
        summary = why_summary(runs_root(), reports)
        if summary is None:
            raise HTTPException(404, "no why-report here")
        row = next((r for r in all_runs() if r.reports == reports), None)
        page = render(summary, nav=_nav(request, row), base=_href(request, "files", reports, WHY_FOLDER) + "/")
        return HTMLResponse(page)

    @app.get("/run/{dag_id}/{run_id}/{what}")
    def run(request: Request, dag_id: str, run_id: str, what: str) -> Response:
        """The targets of the operator extra links (event_replay.orchestration.links): a run's why-report, Data
        Docs or row on this page, found by its folder `_airflow/<run_id>/`."""
        row = next((r for r in all_runs() if r.run_id == run_id and r.dag_id in (dag_id, None)), None)
        if what == "row":
            anchor = row.anchor if row else "run-" + safe_run_id(run_id)
            return RedirectResponse(f"{_href(request)}#{anchor}", 303)
        if row is None or not row.reports:
            raise HTTPException(404, f"run {run_id} left no reports (yet)")
        if what == "why" and row.has_why:
            return RedirectResponse(_href(request, "why", row.reports), 303)
        if what == "docs" and row.has_docs:
            return RedirectResponse(_href(request, "files", row.reports, DOCS_FOLDER, "index.html"), 303)
        raise HTTPException(404, f"run {run_id} has no {what} (yet)")

    @app.get("/record/{reports:path}", response_class=HTMLResponse)
    def record(request: Request, reports: str) -> HTMLResponse:
        rec = run_record(runs_root(), reports)
        if rec is None:
            raise HTTPException(404, "no run record here")
        row = next((r for r in all_runs() if r.reports == reports), None)
        return _page(f"Run record {rec.get('run_id') or reports}", f"<nav>{_nav(request, row)}</nav>"
                     + _record_page(rec, reports, runs_root() / reports))

    @app.get("/tuning/{output:path}", response_class=HTMLResponse)
    def tuning(request: Request, output: str) -> HTMLResponse:
        section = _tuning_section(request, output)
        if not section:
            raise HTTPException(404, "no tuning result for this output")
        body = (f"<p><a href='{_href(request)}'>&larr; all runs</a></p><h1>What-if tuning: "
                f"<code>{html.escape(output)}</code></h1>{section}")
        return _page(f"What-if tuning {output}", body)

    @app.get("/files/{relative:path}")
    def files(request: Request, relative: str) -> Response:
        parts = relative.rstrip("/").split("/")
        if parts[-1] == "index.html":
            parts = parts[:-1]
        if len(parts) > 1 and parts[-1] == WHY_FOLDER:
            # the report's own index.html: the same page, with the way back to the runs
            return RedirectResponse(_href(request, "why", "/".join(parts[:-1])), 303)
        target = safe_path(runs_root(), relative)
        if target is not None and target.is_dir():
            target = target / "index.html"
        if target is None or not target.is_file():
            raise HTTPException(404, "not found")
        if target.suffix == ".html" and f"/{DOCS_FOLDER}/" in f"/{relative}":
            return HTMLResponse(_docs_page(request, target.read_text(errors="replace"),
                                           relative.split(f"/{DOCS_FOLDER}/", 1)[0]
                                           if not relative.startswith(f"{DOCS_FOLDER}/") else "."))
        media = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        return FileResponse(Path(target), media_type=media)

    return app
