"""Operator extra links: from a replay or data-quality task in the Airflow UI to what its run left behind.

The links point at routes of the "Replay runs" plugin (plugins/replay_runs) that find the run's folder by DAG id and
run id (`<output>/_airflow/<run_id>/`), so a link is right for every run, failed ones included, without the task
knowing where the plugin finds the outputs. Airflow computes them when the task ends and keeps them in XCom.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import quote

from airflow.sdk import BaseOperatorLink, conf

PLUGIN_PREFIX = "/replay-runs"  # plugins/replay_runs/urls.py URL_PREFIX


def run_url(dag_id: str, run_id: str, what: str) -> str:
    """`/replay-runs/run/<dag>/<run>/<what>` under Airflow's base URL (absolute when api.base_url is set)."""
    try:

        base = (conf.get("api", "base_url", fallback="") or "").rstrip("/")
    except Exception:  # noqa: BLE001 - no Airflow configuration at hand: a path on the same host
        base = ""
    return f"{base}{PLUGIN_PREFIX}/run/{quote(dag_id, safe='')}/{quote(run_id, safe='')}/{what}"


class WhyReportLink(BaseOperatorLink):
    name = "Why-report"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        return run_url(ti_key.dag_id, ti_key.run_id, "why")


class DataDocsLink(BaseOperatorLink):
    name = "Data Docs"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        return run_url(ti_key.dag_id, ti_key.run_id, "docs")


class ReplayRunsRowLink(BaseOperatorLink):
    name = "Replay runs"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        return run_url(ti_key.dag_id, ti_key.run_id, "row")


RUN_LINKS = (WhyReportLink(), DataDocsLink(), ReplayRunsRowLink())
