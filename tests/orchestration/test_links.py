"""Operator extra links (orchestration/links.py): from a task in the Airflow UI to the Replay runs plugin's routes
for its run, the DAG and run ids quoted into one path segment each, under Airflow's base URL when it is set."""
from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

from event_replay.orchestration import links
from event_replay.orchestration.links import PLUGIN_PREFIX, RUN_LINKS, run_url


def test_run_ids_are_one_quoted_path_segment(monkeypatch):
    monkeypatch.setattr(links.conf, "get", lambda section, key, fallback="": "")
    assert run_url("event_time_backfill", "manual__2024-01-02T03:04:05+00:00", "why") == \
        "/replay-runs/run/event_time_backfill/manual__2024-01-02T03%3A04%3A05%2B00%3A00/why"
    assert run_url("a/b", "../x y", "docs") == "/replay-runs/run/a%2Fb/..%2Fx%20y/docs"


def test_absolute_under_the_base_url(monkeypatch):
    monkeypatch.setattr(links.conf, "get", lambda section, key, fallback="": "http://airflow.example:8080/base/")
    assert run_url("d", "r", "row") == "http://airflow.example:8080/base/replay-runs/run/d/r/row"


def test_no_configuration_at_hand_is_a_path_on_the_same_host(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("no airflow.cfg")

    monkeypatch.setattr(links.conf, "get", broken)
    assert run_url("d", "r", "why") == f"{PLUGIN_PREFIX}/run/d/r/why"


def test_the_three_links_point_at_their_routes(monkeypatch):
    monkeypatch.setattr(links.conf, "get", lambda section, key, fallback="": "")
    key = SimpleNamespace(dag_id="nightly", run_id="scheduled__2024-01-02")
    got = {link.name: link.get_link(None, ti_key=key) for link in RUN_LINKS}
    assert got == {"Why-report": "/replay-runs/run/nightly/scheduled__2024-01-02/why",
                   "Data Docs": "/replay-runs/run/nightly/scheduled__2024-01-02/docs",
                   "Replay runs": "/replay-runs/run/nightly/scheduled__2024-01-02/row"}


def test_the_prefix_is_the_plugin_s():
    # Read, not imported: the plugin's app needs the API server's modules.
    app = Path(__file__).resolve().parents[2] / "plugins" / "replay_runs" / "urls.py"
    (prefix,) = [ast.literal_eval(n.value) for n in ast.parse(app.read_text()).body
                 if isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets] == ["URL_PREFIX"]]
    assert prefix == PLUGIN_PREFIX
