"""The FastAPI app of the "Replay runs" page, mounted by Airflow's API server at URL_PREFIX.

Every route depends on Airflow's own authentication (`requires_authenticated()`: the JWT of Airflow's auth manager,
as a Bearer header or the UI's `_token` cookie). An unauthenticated browser (Accept: text/html) is sent to Airflow's
login page; any other client gets the 401/403 of the dependency.
"""
from __future__ import annotations

import html
import mimetypes
import re
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from airflow.api_fastapi.core_api.security import requires_authenticated

from event_replay.html_page import THEME_SCRIPT
from event_replay.layout import AIRFLOW_FOLDER, DOCS_FOLDER, TUNING_FOLDER, TUNING_PLOT_FILE, WHY_FOLDER
from event_replay.tuning.table import html_table
from event_replay.why.page import render

from .dagruns import fetch_dag_runs, merge
from .places import folder, is_outside, safe_path
from .requested import outside_folders, requested_rows
from .artifacts import run_record, tuning_results, why_summary
from .runs import RunRow, list_runs, runs_root, safe_run_id
from .table import TABLE_STYLE, fmt, runs_table
from .urls import URL_PREFIX, airflow_href, href

__all__ = ["URL_PREFIX", "create_app"]


def _page(title: str, body: str) -> HTMLResponse:
    return HTMLResponse(f"""<!doctype html><html><head><meta charset="utf-8"><meta name="color-scheme"
content="light dark"><title>{html.escape(title)}</title><style>{TABLE_STYLE}</style>{THEME_SCRIPT}</head>
<body>{body}</body></html>""")


def _nav(request: Request, row: RunRow | None = None) -> str:
    links = [f"<a id='runs-link' href='{href(request)}'>&larr; Replay runs</a>"]
    if row is not None and row.dag_id and row.run_id:
        links.append(f"<a target='_top' href='{airflow_href(request, 'dags', row.dag_id, 'runs', row.run_id)}'>"
                     f"Airflow run {html.escape(row.run_id)}</a>")
    if row is not None and row.has_docs:
        links.append(f"<a href='{href(request, 'files', row.reports or '', DOCS_FOLDER, 'index.html')}'>Data Docs</a>")
    return " ".join(links)


def all_runs() -> list[RunRow]:
    """The folders' rows under the root, the rows of the DB's runs that wrote elsewhere, merged with the DB's runs."""
    root, dag_runs = runs_root(), fetch_dag_runs()
    rows = list_runs(root)
    return merge(rows + requested_rows(root, dag_runs, rows), dag_runs)


def _outside(*keys: str) -> list[Path]:
    """The folders outside the root the DB's runs name, when a key is outside the root (a DB read only then)."""
    return outside_folders(runs_root(), fetch_dag_runs()) if any(is_outside(k) for k in keys) else []


def _tuning_section(request: Request, output: str) -> str:
    """Each what-if grid of an output (`replay tune`): its table and its plot; empty when there is none."""
    parts = []
    for i, r in enumerate(tuning_results(runs_root(), output, _outside(output))):
        plot = r.get("plot") or TUNING_PLOT_FILE
        src = href(request, "files", output, TUNING_FOLDER, r["folder"], plot)
        csv = href(request, "files", output, TUNING_FOLDER, r["folder"], "tuning.csv")
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
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{fmt(v)}</td></tr>" for k, v in facts)
    parts = "".join(
        f"<tr><td>{html.escape(pid)}</td><td>{'missing' if p.get('files') is None else len(p['files'])}</td>"
        f"<td class='n'>{sum(f.get('size', 0) for f in p.get('files') or []):,}</td></tr>"
        for pid, p in (inp.get("partitions") or {}).items())
    jobs = "".join(f"<tr><td class='n'>{j.get('job')}</td><td>{html.escape(', '.join(j.get('partitions') or []))}</td>"
                   f"<td class='n'>{fmt(j.get('rows_read'))}</td><td class='n'>{fmt(j.get('seconds'))}</td></tr>"
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
    why = href(request, "why", reports) if why_summary(runs_root(), reports, _outside(reports)) else None
    links = (f"<a id='runs-link' class='btn btn-sm btn-outline-secondary mr-2' href='{href(request)}#run-"
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
                + (runs_table(request, runs) if runs else "<p id='no-runs'>No runs yet.</p>")
                + "<p class='muted'>Where runs are found: the Airflow Variable <code>replay_runs_root</code>, else env "
                  "<code>REPLAY_RUNS_ROOT</code>, else the project's <code>out/</code>.</p>")
        return _page("Replay runs", body)

    @app.get("/why/{reports:path}", response_class=HTMLResponse)
    def why(request: Request, reports: str) -> HTMLResponse:
        summary = why_summary(runs_root(), reports, _outside(reports))
        if summary is None:
            raise HTTPException(404, "no why-report here")
        row = next((r for r in all_runs() if r.reports == reports), None)
        page = render(summary, nav=_nav(request, row), base=href(request, "files", reports, WHY_FOLDER) + "/")
        return HTMLResponse(page)

    @app.get("/run/{dag_id}/{run_id}/{what}")
    def run(request: Request, dag_id: str, run_id: str, what: str) -> Response:
        """The targets of the operator extra links (event_replay.orchestration.links): a run's why-report, Data
        Docs or row on this page, found by its folder `_airflow/<run_id>/`."""
        row = next((r for r in all_runs() if r.run_id == run_id and r.dag_id in (dag_id, None)), None)
        if what == "row":
            anchor = row.anchor if row else "run-" + safe_run_id(run_id)
            return RedirectResponse(f"{href(request)}#{anchor}", 303)
        if row is None or not row.reports:
            raise HTTPException(404, f"run {run_id} left no reports (yet)")
        if what == "why" and row.has_why:
            return RedirectResponse(href(request, "why", row.reports), 303)
        if what == "docs" and row.has_docs:
            return RedirectResponse(href(request, "files", row.reports, DOCS_FOLDER, "index.html"), 303)
        raise HTTPException(404, f"run {run_id} has no {what} (yet)")

    @app.get("/record/{reports:path}", response_class=HTMLResponse)
    def record(request: Request, reports: str) -> HTMLResponse:
        rec = run_record(runs_root(), reports, _outside(reports))
        if rec is None:
            raise HTTPException(404, "no run record here")
        row = next((r for r in all_runs() if r.reports == reports), None)
        return _page(f"Run record {rec.get('run_id') or reports}", f"<nav>{_nav(request, row)}</nav>"
                     + _record_page(rec, reports, folder(runs_root(), reports, _outside(reports))))

    @app.get("/tuning/{output:path}", response_class=HTMLResponse)
    def tuning(request: Request, output: str) -> HTMLResponse:
        section = _tuning_section(request, output)
        if not section:
            raise HTTPException(404, "no tuning result for this output")
        body = (f"<p><a href='{href(request)}'>&larr; all runs</a></p><h1>What-if tuning: "
                f"<code>{html.escape(output)}</code></h1>{section}")
        return _page(f"What-if tuning {output}", body)

    @app.get("/files/{relative:path}")
    def files(request: Request, relative: str) -> Response:
        parts = relative.rstrip("/").split("/")
        if parts[-1] == "index.html":
            parts = parts[:-1]
        if len(parts) > 1 and parts[-1] == WHY_FOLDER:
            # the report's own index.html: the same page, with the way back to the runs
            return RedirectResponse(href(request, "why", "/".join(parts[:-1])), 303)
        target = safe_path(runs_root(), relative, _outside(relative))
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
