"""Airflow 3 plugin: the "Replay runs" page (a FastAPI app at /replay-runs, behind Airflow's login) and its menu entry.

The app lives in the replay_runs package next to this file (ignored by the plugin loader via .airflowignore, which
would otherwise import its modules as top-level modules)."""
from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # Airflow puts the plugins folder on sys.path; a direct import may not have
    sys.path.insert(0, _HERE)

from airflow.plugins_manager import AirflowPlugin  # noqa: E402

from replay_runs.app import URL_PREFIX, create_app  # noqa: E402


class ReplayRunsPlugin(AirflowPlugin):
    name = "replay_runs"
    fastapi_apps = [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Replay runs"}]
    # A nav entry under Browse; with url_route the UI shows the page inside its own frame at /plugin/replay-runs.
    external_views = [{"name": "Replay runs", "href": f"{URL_PREFIX}/", "destination": "nav", "category": "browse",
                       "url_route": "replay-runs"}]
