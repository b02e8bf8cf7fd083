"""The page's URLs: a link inside the app (wherever Airflow mounts it) and a link to a page of the Airflow UI."""
from __future__ import annotations

from urllib.parse import quote

from fastapi import Request

URL_PREFIX = "/replay-runs"


def href(request: Request, *parts: str) -> str:
    """A link inside this app, relative to where it is mounted (root_path includes any Airflow base path)."""
    return request.scope.get("root_path", "").rstrip("/") + "/" + "/".join(quote(p, safe="/") for p in parts)


def airflow_href(request: Request, *parts: str) -> str:
    """A page of the Airflow UI: the app is mounted at <base>/replay-runs, the UI lives at <base>/."""
    root = request.scope.get("root_path", "").rstrip("/")
    base = root[: -len(URL_PREFIX)] if root.endswith(URL_PREFIX) else ""
    return base + "/" + "/".join(quote(p, safe="") for p in parts)
