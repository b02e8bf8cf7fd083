"""The FastAPI app of the "Replay runs" page, mounted by Airflow's API server at URL_PREFIX.

Every route depends on Airflow's own authentication (`requires_authenticated()`: the JWT of Airflow's auth manager,
as a Bearer header or the UI's `_token` cookie). An unauthenticated browser (Accept: text/html) is sent to Airflow's
login page; any other client gets the 401/403 of the dependency.
"""
from __future__ import annotations

import html
import mimetypes
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import quote

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from airflow.api_fastapi.core_api.security import requires_authenticated

from .runs import DOCS_FOLDER, TUNING_FOLDER, WHY_FOLDER, RunRow, list_runs, runs_root, safe_path, \
    tuning_results, why_summary

URL_PREFIX = "/replay-runs"

_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f3f3f3}.pass{color:#1a7f37;font-weight:600}
.fail{color:#cf222e;font-weight:600}.not-run{color:#777}code{font-size:90%}img{max-width:100%;height:auto}"""


def _page(title: str, body: str) -> HTMLResponse:
    return HTMLResponse(f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_STYLE}</style></head><body>{body}</body></html>""")


def _fmt(v: Any) -> str:
    return "&ndash;" if v is None else html.escape(str(v))


def _href(request: Request, *parts: str) -> str:
    """A link inside this app, relative to where it is mounted (root_path includes any Airflow base path)."""
    return request.scope.get("root_path", "").rstrip("/") + "/" + "/".join(quote(p, safe="/") for p in parts)


def _runs_table(request: Request, runs: Iterable[RunRow]) -> str:
    head = ("output", "run", "job", "partitions", "rows", "firings", "late rows", "quarantined", "DQ", "Data Docs",
            "why-report", "what-if tuning")
    lines = [f"<table id='runs'><thead><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr></thead><tbody>"]
    for r in runs:
        parts = ", ".join(r.partitions) if len(r.partitions) <= 4 else \
            f"{r.partitions[0]} .. {r.partitions[-1]} ({len(r.partitions)})"
        docs = f"<a href='{_href(request, 'files', r.output, DOCS_FOLDER, 'index.html')}'>Data Docs</a>" \
            if r.has_docs else "&ndash;"
        why = f"<a href='{_href(request, 'why', r.output)}'>why-report</a>" if r.has_why else "&ndash;"
        tune = f"<a href='{_href(request, 'tuning', r.output)}'>tuning</a>" if r.has_tuning else "&ndash;"
        dq_class = r.dq.replace(" ", "-")
        lines.append(
            f"<tr class='run'><td><code>{html.escape(r.output)}</code></td><td>{_fmt(r.run_id or 'CLI')}</td>"
            f"<td>{_fmt(r.job)}</td><td>{_fmt(parts or None)}</td><td>{_fmt(r.rows_read)}</td>"
            f"<td>{_fmt(r.firings)}</td><td>{_fmt(r.late_rows)}</td><td>{_fmt(r.quarantined)}</td>"
            f"<td class='dq {dq_class}' title='{html.escape(r.dq_detail, quote=True)}'>{html.escape(r.dq)}</td>"
            f"<td>{docs}</td><td>{why}</td><td>{tune}</td></tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _kv_table(rows: list[tuple[str, Any]], table_id: str) -> str:
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{_fmt(v)}</td></tr>" for k, v in rows)
    return f"<table id='{table_id}'><tbody>{body}</tbody></table>"


def _tuning_section(request: Request, output: str) -> str:
    """Each what-if grid of an output (`replay tune`): its table and its plot; empty when there is none."""
    try:  # the project's own formatting of the table (the API server runs in the project's environment)
        from event_replay.tuning.runner import DISPLAY, display_value
    except ImportError:
        DISPLAY = [("variant", "variant"), ("late_rows", "late rows"), ("late_share", "late share")]

        def display_value(col: str, v: Any) -> str:
            return "-" if v is None else str(v)
    parts = []
    for i, r in enumerate(tuning_results(runs_root(), output)):
        head = "".join(f"<th>{html.escape(h)}</th>" for _, h in DISPLAY)
        body = "".join("<tr class='variant'>" + "".join(f"<td>{html.escape(display_value(c, row.get(c)))}</td>"
                                                         for c, _ in DISPLAY) + "</tr>" for row in r.get("rows", []))
        plot = r.get("plot") or "late_share_vs_lag.png"
        src = _href(request, "files", output, TUNING_FOLDER, r["folder"], plot)
        csv = _href(request, "files", output, TUNING_FOLDER, r["folder"], "tuning.csv")
        parts.append(f"<h3><code>{html.escape(r['folder'])}</code></h3><table id='tuning-{i}'><thead><tr>{head}"
                     f"</tr></thead><tbody>{body}</tbody></table><img class='tuning-plot' src='{src}' "
                     f"alt='late share vs watermark lag'><p><a href='{csv}'>tuning.csv</a> (all columns)</p>")
    if not parts:
        return ""
    return ("<h2 id='what-if'>What-if tuning</h2><p>The same input replayed under each variant's watermark "
            "settings (<code>replay tune</code>, DAG <code>watermark_tuning</code>).</p>" + "".join(parts))


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
        runs = list_runs(root)
        body = (f"<h1>Replay runs</h1><p>Runs found under <code>{html.escape(str(root))}</code> "
                f"(Airflow Variable <code>replay_runs_root</code> or env <code>REPLAY_RUNS_ROOT</code>): "
                f"{len(runs)}.</p>" + (_runs_table(request, runs) if runs else "<p id='no-runs'>No runs yet.</p>"))
        return _page("Replay runs", body)

    @app.get("/why/{output:path}", response_class=HTMLResponse)
    def why(request: Request, output: str) -> HTMLResponse:
        root = runs_root()
        summary = why_summary(root, output)
        if summary is None:
            raise HTTPException(404, "no why-report for this output")
        counts = summary.get("counts") or {}
        rows = [*counts.items(), ("firings", summary.get("firings")),
                *[(f"firings ({k})", v) for k, v in sorted((summary.get("firings_by_reason") or {}).items())],
                ("windows", summary.get("windows")), ("splits", ", ".join(summary.get("splits") or [])),
                ("highest stream watermark (ms)", summary.get("highest_stream_watermark_ms")),
                ("late rows", summary.get("late_rows"))]
        late = summary.get("late_rows_by_split_and_cause") or []
        late_rows = "".join(f"<tr><td>{_fmt(r.get('split'))}</td><td>{_fmt(r.get('cause'))}</td>"
                            f"<td>{_fmt(r.get('rows'))}</td></tr>" for r in late)
        holders = "".join(f"<tr><td>{_fmt(k)}</td><td>{_fmt(v)}</td></tr>"
                          for k, v in sorted((summary.get("windows_by_holder") or {}).items()))
        png = (summary.get("timelines_png") or {}).get("file", "timelines.png")
        body = (f"<p><a href='{_href(request)}'>&larr; all runs</a></p><h1>Why-report: <code>{html.escape(output)}"
                f"</code></h1><h2>Summary</h2>{_kv_table(rows, 'summary')}<h2>Watermark timelines</h2>"
                f"<img id='timelines' src='{_href(request, 'files', output, WHY_FOLDER, png)}' "
                f"alt='watermark timelines'>"
                f"<h2>Who held the stream when windows reached their end</h2><table id='holders'><thead><tr>"
                f"<th>held by</th><th>windows</th></tr></thead><tbody>{holders}</tbody></table>"
                f"<h2>Late rows by split and cause</h2><table id='late'><thead><tr><th>split</th><th>cause</th>"
                f"<th>rows</th></tr></thead><tbody>{late_rows}</tbody></table>"
                f"<p>Full report: <a href='{_href(request, 'files', output, WHY_FOLDER, 'index.html')}'>"
                f"index.html</a></p>" + _tuning_section(request, output))
        return _page(f"Why-report {output}", body)

    @app.get("/tuning/{output:path}", response_class=HTMLResponse)
    def tuning(request: Request, output: str) -> HTMLResponse:
        section = _tuning_section(request, output)
        if not section:
            raise HTTPException(404, "no tuning result for this output")
        body = (f"<p><a href='{_href(request)}'>&larr; all runs</a></p><h1>What-if tuning: "
                f"<code>{html.escape(output)}</code></h1>{section}")
        return _page(f"What-if tuning {output}", body)

    @app.get("/files/{relative:path}")
    def files(relative: str) -> FileResponse:
        target = safe_path(runs_root(), relative)
        if target is not None and target.is_dir():
            target = target / "index.html"
        if target is None or not target.is_file():
            raise HTTPException(404, "not found")
        media = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        return FileResponse(Path(target), media_type=media)

    return app
