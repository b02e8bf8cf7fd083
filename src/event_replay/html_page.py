"""The look every HTML page of the project shares (the why-report, replay compare's page, the tuning table, the
Airflow plugin's pages): its style, its light/dark theme and its tables. Standard library only: the plugin imports
it in the Airflow webserver.
"""
from __future__ import annotations

import html
from typing import Any, Callable, Iterable

# Styled like the Airflow 3 UI the plugin's pages sit in (its Chakra theme tokens: Inter, gray/brand oklch scales,
# bg white/black, fg black/gray.50, border gray.200/gray.800), in its light and dark theme. The theme follows the
# UI's choice (next-themes' localStorage `theme`, same origin inside the UI's frame: THEME_SCRIPT), else the system's.
_LIGHT = ("--fg:#09090b;--bg:#fff;--muted:oklch(.45 .055 251);--line:oklch(.915 .01 253);--head:oklch(.985 .004 253);"
          "--link:oklch(.469 .084 257.657);--ok:oklch(.527 .154 150.069);--bad:oklch(.577 .245 27.325);"
          "--warn:oklch(.553 .195 38.402);--accent:oklch(.575 .08 257.759);--mark:oklch(.962 .012 249.46)")
_DARK = ("--fg:oklch(.985 .004 253);--bg:#09090b;--muted:oklch(.75 .025 252);--line:oklch(.28 .035 251);"
         "--head:oklch(.18 .03 251);--link:oklch(.705 .066 256.378);--ok:oklch(.871 .15 154.449);"
         "--bad:oklch(.704 .191 22.216);--warn:oklch(.837 .128 66.29);--accent:oklch(.705 .066 256.378);"
         "--mark:oklch(.259 .062 265.566)")
STYLE = (f":root{{color-scheme:light;{_LIGHT}}}:root[data-theme=dark]{{color-scheme:dark;{_DARK}}}"
         f"@media (prefers-color-scheme:dark){{:root:not([data-theme=light]){{color-scheme:dark;{_DARK}}}}}" + """
body{font-family:Inter,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em;color:var(--fg);
background:var(--bg);font-size:14px;line-height:1.45}a{color:var(--link);text-decoration:none}a:hover{text-decoration:
underline}h1{font-size:1.5em;font-weight:600}h2{font-size:1.2em;font-weight:600;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid var(--line);padding:4px 10px;text-align:left}
th{background:var(--head);font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{font-weight:600}.muted{color:var(--muted)}nav{margin-bottom:.4em}nav a{margin-right:1.2em}
.glance{font-size:1.1em}img{max-width:100%;height:auto;background:#fff;border-radius:4px}code{font-size:92%}""")
# The Airflow UI's theme (next-themes: localStorage `theme` = light | dark | system), followed live when toggled.
THEME_SCRIPT = """<script>(function(){function apply(){var t=null;try{t=localStorage.getItem('theme')}catch(e){}
if(t==='dark'||t==='light'){document.documentElement.dataset.theme=t}else{delete document.documentElement.dataset.theme}}
apply();window.addEventListener('storage',apply)})()</script>"""


def cell(v: Any) -> str:
    """A value as cell text: a dash for none, yes/no, integers with thousands separators, the rest escaped."""
    if v is None:
        return "&ndash;"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    return html.escape(str(v))


def table(rows: Iterable[dict], cols: list[tuple[str, str]], table_id: str, total: dict | None = None,
          text: Callable[[str, Any], str] | None = None, row_class: str | None = None) -> str:
    """The project's one HTML table. cols: (key, heading). A cell shows `text(key, value)` when given, else
    `cell(value)`; numbers are right-aligned; an optional total row; `row_class`: the class of every body row."""
    def td(k: str, v: Any) -> str:
        shown = html.escape(text(k, v)) if text else cell(v)
        return f"<td class='n'>{shown}</td>" if isinstance(v, (int, float)) and not isinstance(v, bool) \
            else f"<td>{shown}</td>"

    def cells(r: dict) -> str:
        return "".join(td(k, r.get(k)) for k, _ in cols)
    tr = f"<tr class='{row_class}'>" if row_class else "<tr>"
    head = "".join(f"<th>{html.escape(h)}</th>" for _, h in cols)
    body = "".join(f"{tr}{cells(r)}</tr>" for r in rows)
    foot = f"<tr class='total'>{cells(total)}</tr>" if total else ""
    return f"<table id='{table_id}'><thead><tr>{head}</tr></thead><tbody>{body}{foot}</tbody></table>"
