"""The "Replay runs" Airflow plugin: loaded by Airflow's plugin manager, behind Airflow's authentication (a real JWT
from the simple auth manager's token endpoint), the runs table, the why-report page, and safe static files.

The run folder is written with the project's own writers where they exist (report.json/report.md by
event_replay.orchestration.report) and small Parquet datasets in the layout io.output writes; the browser test
(test_plugin_browser.py) runs the real replay and quality functions instead."""
from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_env import ROOT, airflow_env

pytestmark = pytest.mark.integration

PLUGINS = ROOT / "plugins"
USER, PASSWORD = "replay-tester", "s3cret-pw"
# 1x1 PNG: the page only links/embeds it; the browser test checks a real plot.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082")


# GX's top bar (render/view/templates/top_navbar.j2), where the page gets its way back to the runs.
DOCS_INDEX = ('<html><body><nav class="navbar navbar-expand-md sticky-top border-bottom" style="height: 70px">'
              '<div class="mr-auto">{}</div></nav></body></html>')


def _parquet(folder: Path, columns: dict[str, list]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), folder / "part-00000.parquet")


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory) -> Path:
    from event_replay.orchestration.report import build_report, write_report

    root = tmp_path_factory.mktemp("runs")
    # An Airflow run of two partitions of job "nightly" with a record; its DQ passed.
    out = root / "nightly"
    for dt, (n_read, n_win, n_late) in {"2024-01-01": (100, 3, 2), "2024-01-02": (50, 2, 0)}.items():
        _parquet(out / "counts" / f"dt={dt}", {"rows_read": [n_read], "rows_in_windows": [n_read - n_late],
                                               "late_rows": [n_late], "quarantined_rows": [1],
                                               "skipped_rows": [0]})
        _parquet(out / "windows" / f"dt={dt}", {"key": ["k"] * n_win})
        _parquet(out / "late_events" / f"dt={dt}", {"key": ["k"] * n_late})
        _parquet(out / "quarantine" / f"dt={dt}", {"reason": ["bad"]})
        _parquet(out / "watermarks" / f"dt={dt}", {"scope": ["stream"]})
    report = build_report(str(out), ["2024-01-01", "2024-01-02"], dag_id="event_time_backfill",
                          run_id="manual__1", config_file="jobs/configs/nightly.yaml", dq="passed (12 expectations)")
    write_report(report, out / "_airflow" / "manual__1")
    # Its compare_live task compared it with the live output: below the form's threshold (the runs page's "vs live").
    (out / "_airflow" / "manual__1" / "compare").mkdir()
    (out / "_airflow" / "manual__1" / "compare" / "summary.json").write_text(json.dumps(
        {"totals": {"agreement_pct": 97.5, "windows": 200, "differing": 5}, "min_agreement_pct": 99.0}))
    # A CLI run (no record) with Data Docs and a why-report.
    cli = root / "adhoc" / "demo"
    _parquet(cli / "counts", {"rows_read": [300], "rows_in_windows": [297], "late_rows": [2],
                              "quarantined_rows": [0], "skipped_rows": [1]})
    _parquet(cli / "windows", {"key": ["a"] * 10})
    _parquet(cli / "late_events", {"key": ["a"] * 2})
    _parquet(cli / "quarantine", {"reason": pa.array([], pa.string())})
    (cli / "_data_docs" / "validations" / "s").mkdir(parents=True)
    (cli / "_data_docs" / "index.html").write_text(DOCS_INDEX.format("docs index"))
    (cli / "_data_docs" / "validations" / "s" / "r.html").write_text("<td>Status</td><td>Failed</td>")
    why = cli / "why_report"
    why.mkdir()
    (why / "timelines.png").write_bytes(PNG)
    (why / "index.html").write_text("<html>why</html>")
    (why / "summary.json").write_text(json.dumps({
        "counts": {"rows_read": 300, "late_rows": 2}, "firings": 10, "firings_by_reason": {"watermark": 10},
        "windows": 9, "splits": ["p0", "p1"], "highest_stream_watermark_ms": 123, "late_rows": 2,
        "windows_by_holder": {"p0": 9}, "late_rows_by_split_and_cause": [{"split": "p1", "cause": "p0", "rows": 2}],
        "timelines_png": {"file": "timelines.png"}}))
    _tuning_result(cli)
    # A second Airflow run of the same output with its own reports, and a third that failed after replaying a day.
    run2 = out / "_airflow" / "manual__2"
    write_report(build_report(str(out), ["2024-01-02"], dag_id="event_time_backfill", run_id="manual__2",
                              config_file="jobs/configs/nightly.yaml", dq="passed (12 expectations)"), run2)
    (run2 / "why_report").mkdir()
    (run2 / "why_report" / "timelines.png").write_bytes(PNG)
    (run2 / "why_report" / "summary.json").write_text((why / "summary.json").read_text())
    (run2 / "_data_docs").mkdir()
    (run2 / "_data_docs" / "index.html").write_text(DOCS_INDEX.format("run 2 docs"))
    run3 = out / "_airflow" / "manual__3"
    (run3 / "done").mkdir(parents=True)
    (run3 / "done" / "2024-01-01").touch()
    (run3 / "job.yaml").write_text("output: {path: x}\n")
    # A run under way: 3 partitions planned, 2 a job; job 1 (2024-01-01..02) committed 2024-01-01 and is on 02.
    from event_replay.orchestration.report import write_chunk_record, write_plan_record

    live_out = root / "live"
    _parquet(live_out / "counts" / "dt=2024-01-01", {"rows_read": [40], "rows_in_windows": [40], "late_rows": [0],
                                                      "quarantined_rows": [0], "skipped_rows": [0]})
    live = live_out / "_airflow" / "manual__live"
    (live / "job.yaml").parent.mkdir(parents=True)
    (live / "job.yaml").write_text("output: {path: x}\n")
    write_plan_record(live, ["2024-01-01", "2024-01-02", "2024-01-03"], partitions_per_job=2)
    write_chunk_record(live, 1, 2, ["2024-01-01", "2024-01-02"])
    _range_json(live_out, "2024-01-01", "2024-01-02", committed="2024-01-01")
    (root / "secret.txt").write_text("not for the web")
    (cli / "job.yaml").write_text("output: {path: x}\n")
    return root


def _range_json(out: Path, first: str, last: str, committed: str | None) -> None:
    """`<output>/_range.json` as the range job (range_replay._save_progress) leaves it after a commit."""
    (out / "_range.json").write_text(json.dumps({"request": {"first_id": first, "last_id": last, "first": True,
                                                             "previous": None, "end_of_input": "hold",
                                                             "allow_missing": False, "fingerprint": "f",
                                                             "source": "log"}, "committed": committed}))


TUNING_ROWS = [{"variant": "delay 1s, idle none, lateness 0ms", "max_out_of_orderness_ms": 1000,
                "idle_timeout_ms": None, "allowed_lateness_ms": 0, "rows": 300, "late_rows": 9, "late_share": 0.03,
                "windows_late_fired": 0, "wm_lag_mean_ms": 1500.0, "wm_lag_p99_ms": 4000,
                "first_fire_delay_mean_ms": 1200.0, "first_fire_delay_windows": 10, "firings": 10, "windows": 10,
                "late_rows_by_cause": "p0 9", "late_rows_by_split": "p1 9"},
               {"variant": "delay 5s, idle 30s, lateness 0ms", "max_out_of_orderness_ms": 5000,
                "idle_timeout_ms": 30000, "allowed_lateness_ms": 0, "rows": 300, "late_rows": 2,
                "late_share": 2 / 300, "windows_late_fired": 0, "wm_lag_mean_ms": 5200.0, "wm_lag_p99_ms": 6000,
                "first_fire_delay_mean_ms": 5100.0, "first_fire_delay_windows": 10, "firings": 10, "windows": 10,
                "late_rows_by_cause": "p0 2", "late_rows_by_split": "p1 2"}]


def _tuning_result(out: Path) -> str:
    """A what-if result as `replay tune` writes it (its own writer, with figures given here)."""
    from event_replay.semantics.config import parse_config
    from event_replay.tuning import parse_grid
    from event_replay.tuning.runner import tuning_folder, write_result

    cfg = parse_config({"source": {"path": "log"}, "window": {"type": "tumbling", "size": "2s"},
                        "watermark": {"max_out_of_orderness": "1s"}, "aggregations": {"cnt": "count(*)"},
                        "output": {"path": str(out)}})
    grid, _ = parse_grid(cfg, "1s,5s", "none,30s")
    write_result(tuning_folder(cfg, grid), cfg, grid, TUNING_ROWS, source_info={"rows": 300})
    return grid.name


@pytest.fixture(scope="module")
def client(runs_root, tmp_path_factory):
    """Airflow's simple auth manager (its /auth app with the token endpoint) and the plugin app, as the API server
    mounts them, with a known user and password."""
    home = tmp_path_factory.mktemp("airflow-home")
    passwords = home / "passwords.json"
    passwords.write_text(json.dumps({USER: PASSWORD}))
    mp = pytest.MonkeyPatch()
    for k, v in {"AIRFLOW__CORE__AUTH_MANAGER":
                 "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
                 "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:admin",
                 "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
                 "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
                 "AIRFLOW__API_AUTH__JWT_SECRET": "test-plugin-jwt-secret-0123456789abcdef",
                 "REPLAY_RUNS_ROOT": str(runs_root)}.items():
        mp.setenv(k, v)
    mp.setenv("AIRFLOW_HOME", str(home))
    mp.syspath_prepend(str(PLUGINS))
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from airflow.api_fastapi.app import init_auth_manager
    from replay_runs_plugin import ReplayRunsPlugin

    from airflow import settings
    from airflow.models.revoked_token import RevokedToken

    # Token checks look up revoked tokens in the metadata DB: that one table, not a full (slow) `airflow db migrate`.
    RevokedToken.__table__.create(settings.engine, checkfirst=True)
    app = FastAPI()
    init_auth_manager(app)
    spec = ReplayRunsPlugin.fastapi_apps[0]
    app.mount(spec["url_prefix"], spec["app"])
    with TestClient(app, follow_redirects=False) as c:
        yield c
    mp.undo()


@pytest.fixture(scope="module")
def token(client) -> str:
    r = client.post("/auth/token", json={"username": USER, "password": PASSWORD})
    assert r.status_code == 201, r.text
    return r.json()["access_token"]


def test_plugin_manager_loads_the_plugin(tmp_path):
    """`airflow plugins` in a fresh AIRFLOW_HOME with the project's plugins folder: no import error, the app and
    the menu entry are registered."""
    env = airflow_env(tmp_path)
    proc = subprocess.run([str(Path(sys.executable).parent / "airflow"), "plugins", "-o", "json"], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Failed to import plugin" not in proc.stdout + proc.stderr, proc.stderr[-4000:]
    plugins = json.loads(proc.stdout[proc.stdout.index("["):])
    ours = [p for p in plugins if p["name"] == "replay_runs"]
    assert len(ours) == 1, plugins
    assert "/replay-runs" in json.dumps(ours[0]["fastapi_apps"])
    views = ours[0]["external_views"]
    assert "Replay runs" in json.dumps(views) and "/replay-runs/" in json.dumps(views)


def test_unauthenticated_requests_are_refused(client):
    for path in ("/replay-runs/", "/replay-runs/why/adhoc/demo", "/replay-runs/files/adhoc/demo/why_report/timelines.png",
                 "/replay-runs/tuning/adhoc/demo"):
        r = client.get(path)
        assert r.status_code in (401, 403), (path, r.status_code)
        assert "Replay runs" not in r.text
    assert client.get("/replay-runs/", headers={"Authorization": "Bearer not-a-jwt"}).status_code in (401, 403)
    assert client.get("/replay-runs/", cookies={"_token": "not-a-jwt"}).status_code in (401, 403)


def test_unauthenticated_browser_goes_to_login(client):
    r = client.get("/replay-runs/", headers={"Accept": "text/html"})
    assert r.status_code == 303 and "login" in r.headers["location"], (r.status_code, r.headers)


def test_wrong_password_gets_no_token(client):
    assert client.post("/auth/token", json={"username": USER, "password": "wrong"}).status_code == 401


def _rows(page: str) -> list[str]:
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [r for r in re.split(r"<tr class='run'[^>]*>", body)[1:]]


def _cells(row: str) -> list[str]:
    """The text of each cell (run with DAG and output, state, start, duration, partitions, rows, firings, late rows,
    quarantined, DQ, reports, vs live)."""
    return [" ".join(re.sub(r"<[^>]+>", " ", c.split("</td>")[0].split(">", 1)[1].replace("<wbr>", "")).split())
            for c in row.split("<td")[1:]]


def test_runs_table_with_a_bearer_token(client, token):
    r = client.get("/replay-runs/", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    rows = _rows(r.text)
    assert len(rows) == 5
    cli = next(x for x in rows if "output adhoc/demo" in _cells(x)[0])
    c = _cells(cli)
    assert c[0] == "CLI output adhoc/demo" and c[1] == "done" and c[5:9] == ["300", "10", "2", "0"], c
    assert c[9] == "fail" and c[10] == "why-report Data Docs tuning" and c[11] == "&ndash;", c  # not compared
    n = _cells(next(x for x in rows if ">manual__1<" in x or "manual__1" in _cells(x)[0]))
    assert n[0] == "manual__1 event_time_backfill, output nightly config nightly.yaml", n
    assert n[4] == "2024-01-01, 2024-01-02 2/2 done", n
    assert n[5:9] == ["150", "5", "2", "2"], n
    assert n[9] == "pass" and n[10] == "report", n  # the run report as a page
    assert n[11] == "97.50% 5 of 200 windows differ", n  # vs live, below its 99% threshold: linked, marked failed
    vs = next(x for x in rows if "manual__1" in _cells(x)[0]).split("<td")[12]
    assert "class='live n fail'" in vs and "nightly/_airflow/manual__1/compare/index.html" in vs, vs
    report = client.get("/replay-runs/files/nightly/_airflow/manual__1/report.html",
                        headers={"Authorization": f"Bearer {token}"})
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/html"), report.status_code
    assert "<th>firings</th>" in report.text and "<td class='n'>5</td>" in report.text
    assert client.get("/replay-runs/files/nightly/_airflow/manual__1/report.json",
                      headers={"Authorization": f"Bearer {token}"}).status_code == 404  # only the report's pages


def test_each_airflow_run_keeps_its_own_reports(client, token):
    """Two runs of one output folder: each row links to the reports in its own run folder; a run that failed
    after its plan (no report.json) is listed with the partitions it replayed."""
    auth = {"Authorization": f"Bearer {token}"}
    rows = _rows(client.get("/replay-runs/", headers=auth).text)
    second = next(x for x in rows if "manual__2" in x)
    assert "href='/replay-runs/why/nightly/_airflow/manual__2'" in second
    assert "href='/replay-runs/files/nightly/_airflow/manual__2/_data_docs/index.html'" in second
    failed = _cells(next(x for x in rows if "manual__3" in x))
    assert failed[4] == "2024-01-01" and failed[9] == "not run" and failed[10] == "&ndash;", failed
    live = _cells(next(x for x in rows if "manual__live" in x))
    assert live[4] == "2024-01-01 to 2024-01-03 (3) 1/3 done replaying 2024-01-02", live
    why = client.get("/replay-runs/why/nightly/_airflow/manual__2", headers=auth)
    assert why.status_code == 200 and "id='runs-link' href='/replay-runs/'" in why.text
    assert "src='/replay-runs/files/nightly/_airflow/manual__2/why_report/timelines.png'" in why.text
    # the report's own index.html is the same page, with its way back
    r = client.get("/replay-runs/files/nightly/_airflow/manual__2/why_report/index.html", headers=auth)
    assert r.status_code == 303 and r.headers["location"] == "/replay-runs/why/nightly/_airflow/manual__2"


def test_extra_link_targets_find_the_run(client, token):
    auth = {"Authorization": f"Bearer {token}"}
    r = client.get("/replay-runs/run/event_time_backfill/manual__2/why", headers=auth)
    assert r.status_code == 303 and r.headers["location"] == "/replay-runs/why/nightly/_airflow/manual__2"
    r = client.get("/replay-runs/run/event_time_backfill/manual__2/docs", headers=auth)
    assert r.headers["location"] == "/replay-runs/files/nightly/_airflow/manual__2/_data_docs/index.html"
    r = client.get("/replay-runs/run/event_time_backfill/manual__2/row", headers=auth)
    assert r.headers["location"] == "/replay-runs/#run-manual__2"
    assert client.get("/replay-runs/run/event_time_backfill/manual__3/why", headers=auth).status_code == 404


def test_merge_adds_airflow_state_and_orders_newest_first():
    from datetime import datetime, timezone

    from replay_runs.dagruns import DagRunInfo, merge
    from replay_runs.runs import RunRow

    def at(h: int) -> datetime:
        return datetime(2026, 1, 1, h, tzinfo=timezone.utc)

    disk = [RunRow(output="o", run_id="manual__2026-01-01T01:00:00+00:00", job="j", partitions=["2024-01-01"],
                   rows_read=1, firings=1, late_rows=0, quarantined=0, dq="pass", start=at(1)),
            RunRow(output="cli", run_id=None, job="c", partitions=[], rows_read=1, firings=1, late_rows=0,
                   quarantined=0, dq="pass", state="done", end=at(2))]
    db = [DagRunInfo("event_time_backfill", "manual__2026-01-01T01:00:00+00:00", "failed", at(1),
                     at(1).replace(minute=3)),
          DagRunInfo("event_time_backfill", "manual__refused", "failed", at(3), at(3),
                     {"config": "jobs/configs/demo.yaml", "start_date": "2024-01-03", "end_date": "2024-01-01"})]
    rows = merge(disk, db)
    assert [r.run_id for r in rows] == ["manual__refused", None, "manual__2026-01-01T01:00:00+00:00"]
    assert rows[0].output is None and rows[0].state == "failed" and rows[0].extra["requested"] == ["2024-01-03",
                                                                                                    "2024-01-01"]
    assert rows[2].state == "failed" and rows[2].dag_id == "event_time_backfill"
    assert (rows[2].end - rows[2].start).total_seconds() == 180


def test_ui_cookie_is_accepted(client, token):
    r = client.get("/replay-runs/", cookies={"_token": token})
    assert r.status_code == 200 and "id='runs'" in r.text


def test_why_report_page(client, token):
    auth = {"Authorization": f"Bearer {token}"}
    r = client.get("/replay-runs/why/adhoc/demo", headers=auth)
    assert r.status_code == 200
    assert "src='/replay-runs/files/adhoc/demo/why_report/timelines.png'" in r.text
    assert "300 rows read" in r.text and "<td>p1</td><td>p0</td><td class='n'>2</td>" in r.text
    png = client.get("/replay-runs/files/adhoc/demo/why_report/timelines.png", headers=auth)
    assert png.status_code == 200 and png.headers["content-type"] == "image/png" and png.content == PNG
    docs = client.get("/replay-runs/files/adhoc/demo/_data_docs/index.html", headers=auth)
    assert docs.status_code == 200 and "docs index" in docs.text
    # The Data Docs lead back: to the run's row on the runs page and to its why-report.
    assert "id='runs-link' class='btn btn-sm btn-outline-secondary mr-2' href='/replay-runs/#run-adhoc_demo'" in docs.text
    assert "id='why-link' class='btn btn-sm btn-outline-secondary' href='/replay-runs/why/adhoc/demo'" in docs.text
    assert "id='run-adhoc_demo'" in client.get("/replay-runs/", headers=auth).text
    run2 = client.get("/replay-runs/files/nightly/_airflow/manual__2/_data_docs/index.html", headers=auth).text
    assert "run 2 docs" in run2 and "href='/replay-runs/#run-manual__2'" in run2
    assert client.get("/replay-runs/why/nightly", headers=auth).status_code == 404


def test_tuning_page_table_and_plot(client, token):
    auth = {"Authorization": f"Bearer {token}"}
    rows = _rows(client.get("/replay-runs/", headers=auth).text)
    cli = next(x for x in rows if "output adhoc/demo" in _cells(x)[0])
    nightly = next(x for x in rows if "output nightly " in _cells(x)[0] + " ")
    assert "href='/replay-runs/tuning/adhoc/demo'" in cli and "/replay-runs/tuning/" not in nightly
    r = client.get("/replay-runs/tuning/adhoc/demo", headers=auth)
    assert r.status_code == 200, r.text
    name = "delay_1s-5s__idle_none-30s__lateness_0ms"
    assert f"<code>{name}</code>" in r.text and r.text.count("<tr class='variant'>") == 2
    assert "<td>delay 5s, idle 30s, lateness 0ms</td><td class='n'>2</td><td class='n'>0.667%</td>" in r.text
    src = f"/replay-runs/files/adhoc/demo/_tuning/{name}/late_share_vs_lag.png"
    assert f"src='{src}'" in r.text
    png = client.get(src, headers=auth)
    assert png.status_code == 200 and png.headers["content-type"] == "image/png" and png.content[:4] == b"\x89PNG"
    assert client.get(f"/replay-runs/files/adhoc/demo/_tuning/{name}/tuning.csv", headers=auth).status_code == 200
    assert client.get("/replay-runs/tuning/nightly", headers=auth).status_code == 404
    assert client.get("/replay-runs/tuning/adhoc/demo/../../nightly", headers=auth).status_code == 404


@pytest.mark.parametrize("path", [
    "/replay-runs/files/adhoc/demo/why_report/../../../secret.txt",
    "/replay-runs/files/adhoc/demo/why_report/%2e%2e/%2e%2e/%2e%2e/secret.txt",
    "/replay-runs/files/adhoc/demo/why_report/..%2f..%2f..%2fsecret.txt",
    "/replay-runs/files/adhoc/demo/_data_docs/%2e%2e/job.yaml",
    "/replay-runs/files/adhoc/demo/job.yaml",  # under the root but not in a served folder
    "/replay-runs/files/nightly/counts/dt=2024-01-01/part-00000.parquet",
    "/replay-runs/files//etc/passwd",
    "/replay-runs/files/%2fetc%2fpasswd",
    "/replay-runs/files/adhoc/demo/why_report/..%5c..%5c..%5csecret.txt",
])
def test_path_traversal_is_refused(client, token, path):
    r = client.get(path, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 404, (path, r.status_code)
    assert "not for the web" not in r.text and "root:" not in r.text


def test_safe_path_unit(runs_root, tmp_path):
    from replay_runs.places import safe_path

    assert safe_path(runs_root, "adhoc/demo/why_report/timelines.png") == \
        (runs_root / "adhoc/demo/why_report/timelines.png").resolve()
    for bad in ("../x", "adhoc/demo/why_report/../../../secret.txt", "/etc/passwd", "secret.txt",
                "adhoc/demo/why_report\\..\\x", "adhoc/demo/why_report/\x00"):
        assert safe_path(runs_root, bad) is None, bad
    # A symlink in a served folder that points out of the root is not followed out.
    link = runs_root / "adhoc" / "demo" / "why_report" / "escape.txt"
    (tmp_path / "outside.txt").write_text("outside")
    link.symlink_to(tmp_path / "outside.txt")
    try:
        assert safe_path(runs_root, "adhoc/demo/why_report/escape.txt") is None
    finally:
        link.unlink()


def _progress_run(tmp_path: Path, planned: list[str], per_job: int = 2) -> tuple[Path, Path]:
    from event_replay.orchestration.report import write_plan_record

    out = tmp_path / "out"
    run = out / "_airflow" / "r"
    write_plan_record(run, planned, partitions_per_job=per_job)
    return out, run


def test_progress_from_the_run_records(tmp_path):
    """Partitions done / planned and the one replaying, from what the plan task, the replay operator and the range
    job leave on disk, at each step of a run of 5 partitions in chunks of 2."""
    import os
    import time

    from event_replay.orchestration.report import clear_chunk_record, write_chunk_record
    from replay_runs.progress import progress

    days = [f"2024-01-0{i}" for i in range(1, 6)]
    out, run = _progress_run(tmp_path, days)
    p = progress(out, run)
    assert (p.planned, p.done, p.current) == (days, [], None)  # planned, nothing replaying yet
    write_chunk_record(run, 1, 3, days[:2])
    p = progress(out, run)
    assert (p.done, p.current) == ([], "2024-01-01")  # job 1 started, nothing committed
    _range_json(out, days[0], days[1], committed=days[0])
    p = progress(out, run)
    assert (p.done, p.current) == (days[:1], "2024-01-02")  # the range job committed its first partition
    (run / "done").mkdir()
    for d in days[:2]:  # job 1 finished: the operator's markers; job 2 starts, the old _range.json is not its own
        (run / "done" / d).touch()
    write_chunk_record(run, 2, 3, days[2:4])
    p = progress(out, run)
    assert (p.done, p.current) == (days[:2], "2024-01-03")
    # a _range.json of this chunk written before the chunk started (an earlier attempt) is not trusted
    _range_json(out, days[2], days[3], committed=days[2])
    old = time.time() - 60
    os.utime(out / "_range.json", (old, old))
    assert progress(out, run).done == days[:2]
    _range_json(out, days[2], days[3], committed=days[3])
    p = progress(out, run)
    assert (p.done, p.current) == (days[:4], "2024-01-05")  # committed up to the chunk's end, markers not yet
    for d in days[2:]:
        (run / "done" / d).touch()
    clear_chunk_record(run)
    p = progress(out, run)
    assert (p.done, p.current) == (days, None)  # replayed; data quality and the report to go
    (run / "report.json").write_text(json.dumps({"partitions": [{"partition": d} for d in days], "complete": True}))
    assert progress(out, run).done == days


def test_progress_cell_by_state():
    """The runs page's partitions cell: done / planned, a bar, and the partition replaying (running) or where the
    run stopped (failed)."""
    from replay_runs.table import partitions_cell
    from replay_runs.runs import RunRow

    def row(state, done, current):
        return RunRow(output="o", run_id="r", job="j", partitions=[], rows_read=None, firings=None, late_rows=None,
                      quarantined=None, dq="not run", state=state, planned=[f"2024-01-{d:02d}" for d in range(1, 32)],
                      done=done, current=current)

    def text(cell):
        return re.sub(r"<[^>]+>", " ", cell).split()

    running = partitions_cell(row("running", 12, "2024-01-13"))
    assert text(running) == ["2024-01-01", "to", "2024-01-31", "(31)", "12/31", "done", "replaying", "2024-01-13"]
    assert "width:38%" in running
    assert text(partitions_cell(row("failed", 12, "2024-01-13")))[-4:] == ["done", "stopped", "in", "2024-01-13"]
    assert "checking data quality" in " ".join(text(partitions_cell(row("running", 31, None))))
    assert text(partitions_cell(row("success", 31, None)))[-2:] == ["31/31", "done"]


def test_the_duration_cell_says_how_long_each_step_took(monkeypatch):
    """Under a run's duration, from its report's steps (orchestration/steps.py): how long each step after the plan
    took, a failed one marked with its line as the tooltip; nothing before the report exists."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    from replay_runs.runs import RunRow
    from replay_runs.table import steps_line

    steps = [{"task": "plan", "state": "success", "seconds": 0.4},
             {"task": "replay_partitions", "state": "success", "seconds": 25.0},
             {"task": "calibrate", "state": "failed", "seconds": 4.2, "line": "calibration: refused: <grid>"},
             {"task": "compare_live", "state": "success", "seconds": 31.0},
             {"task": "data_quality", "state": "success", "seconds": 19.5}]
    row = RunRow(output="o", run_id="r", job="j", partitions=[], rows_read=None, firings=None, late_rows=None,
                 quarantined=None, dq="pass", steps=steps)
    line = steps_line(row)
    assert re.sub(r"<[^>]+>", "", line) == "replay 25.0 s, calibrate 4.2 s failed, compare 31.0 s, DQ 19.5 s", \
        line
    assert "class='step step-failed' title='calibration: refused: &lt;grid&gt;'" in line
    assert steps_line(RunRow(output="o", run_id="r", job="j", partitions=[], rows_read=None, firings=None,
                             late_rows=None, quarantined=None, dq="not run")) == ""


def test_failed_runs_say_why(monkeypatch):
    """Under a failed run's state: the line its task kept (XCom replay_failure), else which task failed; a skipped
    nightly and a dry run say what happened too."""
    from datetime import datetime, timezone

    monkeypatch.syspath_prepend(str(PLUGINS))
    from replay_runs.table import state_cell
    from replay_runs.dagruns import DagRunInfo, merge, reason
    from replay_runs.runs import RunRow

    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    refused = DagRunInfo("event_time_backfill", "r1", "failed", at, at,
                         notes={"replay_failure": "Refused: Last day: 2024-01-01 is before the first day 2024-01-03"})
    killed = DagRunInfo("event_time_backfill", "r2", "failed", at, at, failed_tasks=("replay_partitions",))
    dry = DagRunInfo("event_time_backfill", "r3", "success", at, at,
                     notes={"replay_dry_run": {"summary": "dry run: 3 partitions, 1 Spark jobs, 600 rows"}})
    skipped = DagRunInfo("nightly_event_time_backfill", "r4", "success", at, at,
                         notes={"replay_skipped": "skipped: dt=2026-01-01 is not in /log 6 h after the day ended"})
    assert reason(killed) == "task replay_partitions failed (no cause recorded: see its log)"
    rows = {r.run_id: r for r in merge([], [refused, killed, dry, skipped])}
    cell = state_cell(rows["r1"])
    assert cell.startswith("<td class='state state-failed'>failed<div class='reason'>Refused: Last day") and \
        cell.endswith("</div></td>"), cell
    assert "dry run<div class='reason'>dry run: 3 partitions" in state_cell(rows["r3"])
    assert "skipped: dt=2026-01-01" in state_cell(rows["r4"])
    folder = RunRow(output="o", run_id="r2", job="j", partitions=[], rows_read=None, firings=None, late_rows=None,
                    quarantined=None, dq="not run", reason="cancelled after partition 1 of 3")
    assert merge([folder], [killed])[0].reason == "cancelled after partition 1 of 3"  # the run folder knows better


def test_run_folder_row_has_version_config_cancel_and_dq_off(tmp_path, monkeypatch):
    """A run folder with its record, a cancel and data quality off: the row's version, config and reason."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    from event_replay.orchestration.cancel import write_cancel_record
    from event_replay.orchestration.record import write_record
    from event_replay.orchestration.report import write_chunk_record, write_plan_record
    from replay_runs.table import partitions_cell
    from replay_runs.artifacts import run_record
    from replay_runs.runs import list_runs

    run = tmp_path / "out" / "_airflow" / "manual__1"
    days = ["2024-01-01", "2024-01-02", "2024-01-03"]
    write_plan_record(run, days, partitions_per_job=1, run_data_quality=False)
    (run / "done").mkdir()
    (run / "done" / days[0]).touch()
    write_chunk_record(run, 2, 3, days[1:2])
    write_cancel_record(run, 2, 3, days[1:2])
    write_record(run, {"run_id": "manual__1", "project": {"version": "0.1.0", "commit": "46a2f0e" + "0" * 33,
                                                          "dirty": True},
                       "config": {"file": "/srv/jobs/demo_partitioned.yaml"}})
    (row,) = list_runs(tmp_path)
    assert (row.reason, row.version, row.config_file, row.dq_off) == (
        "cancelled after partition 1 of 3", "0.1.0 46a2f0e+", "/srv/jobs/demo_partitioned.yaml", True)
    assert run_record(tmp_path, "out/_airflow/manual__1")["run_id"] == "manual__1"
    assert run_record(tmp_path, "out/_airflow/../_airflow/manual__1") is None  # only a run folder's own record
    assert run_record(tmp_path, "out") is None
    from dataclasses import replace

    done = replace(row, state="running", done=3, current=None, reason=None)
    assert "writing the report (data quality off)" in partitions_cell(done)


def test_waiting_and_already_committed_runs(tmp_path, monkeypatch):
    """A run waiting for the output's turn says for which run (or which Spark driver) under its progress; a run that
    replayed nothing because an identical run had committed its range says by which run; a run that waited and went
    on says nothing of it any more."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    from dataclasses import replace

    from event_replay.orchestration.record import write_record
    from event_replay.orchestration.report import write_plan_record
    from event_replay.orchestration.turn import turn_path, waiting_note
    from replay_runs.runs import list_runs
    from replay_runs.table import partitions_cell

    out, days = tmp_path / "out", ["2024-01-01", "2024-01-02", "2024-01-03"]
    holder = {"run_id": "manual__a", "dag_id": "event_time_backfill", "pid": 41, "host": "h", "started": "t",
              "args": ["airflow"]}
    for run_id, record in (
            ("manual__b", {"waiting": waiting_note(str(out), holder, "{}", turn_path(out / "_airflow", str(out)))}),
            ("manual__c", {"waiting": waiting_note(str(out), {**holder, "run_id": None}, "{}", out / "_lock")}),
            ("manual__d", {"skipped": {"committed_by": {"manual__a": days}}}),
            ("manual__e", {"waiting": None, "waited": [{"for": "manual__a", "dag_id": "x", "seconds": 3.0}]})):
        run = out / "_airflow" / run_id
        write_plan_record(run, days, partitions_per_job=2)
        write_record(run, {"run_id": run_id, **record})
    rows = {r.run_id: r for r in list_runs(tmp_path)}

    def text(r, state):
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", partitions_cell(replace(r, state=state)))).split())

    assert text(rows["manual__b"], "running").endswith("0/3 done waiting for run manual__a: it holds the output")
    assert text(rows["manual__c"], "running").endswith("waiting for pid 41 on h since t (airflow): it holds the job's "
                                                       "lock")
    assert "waiting" not in text(rows["manual__b"], "failed")  # a dead try's note is not a wait
    assert text(rows["manual__d"], "success").endswith(
        "2024-01-01..2024-01-03 (3 partitions) already committed by run manual__a")
    assert rows["manual__e"].waiting is None and rows["manual__e"].committed_by == []
    assert "already committed" not in text(rows["manual__e"], "success")


def test_record_page(client, token, runs_root):
    """The run record of a run folder as a page: version, config, input per partition, Spark jobs."""
    from event_replay.orchestration.record import write_record

    write_record(runs_root / "nightly" / "_airflow" / "manual__1",
                 {"run_id": "manual__1", "dag_id": "event_time_backfill",
                  "project": {"version": "0.1.0", "commit": "abc", "dirty": False},
                  "config": {"file": "jobs/configs/nightly.yaml", "resolved": {"window": {"type": "tumbling"}}},
                  "input": {"source": "/log", "listed": True, "digest": "f" * 64,
                            "partitions": {"2024-01-01": {"folder": "dt=2024-01-01",
                                                          "files": [{"path": "a.parquet", "size": 10}]}}},
                  "spark": {"version": "4.1.3", "master": "local[2]"},
                  "jobs": [{"job": 1, "partitions": ["2024-01-01"], "seconds": 12.5, "rows_read": 15000}]})
    try:
        auth = {"Authorization": f"Bearer {token}"}
        page = client.get("/replay-runs/record/nightly/_airflow/manual__1", headers=auth)
        assert page.status_code == 200, page.text
        assert "<th>project version</th><td>0.1.0</td>" in page.text and "4.1.3 on local[2]" in page.text
        assert "<td>2024-01-01</td><td>1</td><td class='n'>10</td>" in page.text and "type: tumbling" in page.text
        assert "replay verify " in page.text
        assert "<td class='n'>15,000</td><td class='n'>12.5</td>" in page.text  # counts read at a glance
        row = next(x for x in _rows(client.get("/replay-runs/", headers=auth).text) if "manual__1" in x)
        assert "href='/replay-runs/record/nightly/_airflow/manual__1'" in row and ">v0.1.0 abc<" in row
        assert client.get("/replay-runs/record/nightly/_airflow/manual__2", headers=auth).status_code == 404
        assert client.get("/replay-runs/record/../nightly/_airflow/manual__1", headers=auth).status_code == 404
    finally:
        (runs_root / "nightly" / "_airflow" / "manual__1" / "run.json").unlink()


def _outside_output(base: Path, days: list[str]) -> tuple[Path, Path]:
    """An output outside the runs root with `days` committed and the folder of a run whose data quality failed after
    replaying them (no report.json: the report task never ran), as its tasks leave it."""
    from event_replay.orchestration.report import write_plan_record

    out = base / "elsewhere" / "out40"
    for d in days:
        _parquet(out / "counts" / f"dt={d}", {"rows_read": [10], "rows_in_windows": [9], "late_rows": [1],
                                              "quarantined_rows": [0], "skipped_rows": [0]})
        for ds, n in (("windows", 4), ("late_events", 1), ("watermarks", 1), ("quarantine", 0)):
            _parquet(out / ds / f"dt={d}", {"key": pa.array(["k"] * n, pa.string())})
    run = out / "_airflow" / "manual__far"
    write_plan_record(run, days, partitions_per_job=31)
    (run / "done").mkdir()
    for d in days:
        (run / "done" / d).touch()
    (run / "data_quality.json").write_text(json.dumps({"success": False, "expectations": 12, "failed": 1,
                                                       "failed_names": ["windows: no duplicate firing"]}))
    (run / "_data_docs").mkdir()
    (run / "_data_docs" / "index.html").write_text(DOCS_INDEX.format("far docs"))
    return out, run


def _far_dag_runs(out: Path, run: Path, days: list[str]):
    """The DB's view of the two runs on that output: the failed one and a later dry run of the same days (its
    validate result names the output; the dry run writes no folder)."""
    from datetime import datetime, timezone

    from replay_runs.dagruns import DagRunInfo

    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    request = {"output_path": str(out), "config_file": "jobs/configs/far.yaml", "start": days[0], "end": days[-1]}
    failed = DagRunInfo("event_time_backfill", "manual__far", "failed", at, at, failed_tasks=("data_quality",),
                        notes={"replay_failure": "data quality FAILED 1/12: windows: no duplicate firing"},
                        request={**request, "run_dir": str(run)})
    dry = DagRunInfo("event_time_backfill", "manual__dry", "success", at.replace(hour=1), at.replace(hour=1),
                     notes={"replay_dry_run": {"summary": f"dry run: {len(days)} partitions, 3 already committed",
                                               "dry_run": {"partitions": [{"partition": d} for d in days]}}},
                     request={**request, "dry_run": True, "run_dir": str(out / "_airflow" / "manual__dry")})
    return [failed, dry]


def test_runs_page_is_true_for_an_output_outside_the_root(client, token, tmp_path, monkeypatch):
    """A run whose output is outside the runs root (found through its validate result in the DB): its partitions
    committed, progress, DQ failed (its data_quality.json), the Data Docs it wrote, served; a dry run of the same
    output names it and what it holds. Nothing outside those folders is served."""
    import replay_runs.app as app

    days = ["2024-02-01", "2024-02-02", "2024-02-03", "2024-02-04"]
    out, run = _outside_output(tmp_path, days)
    (out / "windows" / f"dt={days[-1]}" / "part-00000.parquet").unlink()  # the last day is not committed
    monkeypatch.setattr(app, "fetch_dag_runs", lambda: _far_dag_runs(out, run, days))
    auth = {"Authorization": f"Bearer {token}"}
    rows = _rows(client.get("/replay-runs/", headers=auth).text)
    far = next(x for x in rows if "manual__far" in x)
    c = _cells(far)
    assert c[0] == f"manual__far event_time_backfill, output {out.resolve()} config far.yaml", c
    assert c[1] == "failed data quality FAILED 1/12: windows: no duplicate firing", c
    assert c[4] == f"{days[0]} to {days[-1]} (4) 4/4 done" and c[5:9] == ["40", "12", "4", "0"], c
    assert c[9] == "fail" and c[10] == "Data Docs", c
    docs = re.search(r"href='([^']+_data_docs/index.html)'", far).group(1)
    assert docs == f"/replay-runs/files/_outside{run.resolve()}/_data_docs/index.html", docs
    page = client.get(docs, headers=auth)
    assert page.status_code == 200 and "far docs" in page.text, page.status_code
    dry = _cells(next(x for x in rows if "manual__dry" in x))
    assert dry[0] == f"manual__dry event_time_backfill, output {out.resolve()} config far.yaml", dry
    assert dry[1].startswith("dry run dry run: 4 partitions"), dry
    assert dry[4] == f"{days[0]} to {days[-1]} (4) 3 of 4 committed in the output", dry
    for path in (f"_outside{out.resolve()}/counts/dt={days[0]}/part-00000.parquet",
                 f"_outside{run.resolve()}/data_quality.json", f"_outside{tmp_path.resolve()}/elsewhere",
                 f"_outside{run.resolve()}/_data_docs/../../../../../../etc/passwd", "_outside/etc/passwd"):
        assert client.get(f"/replay-runs/files/{path}", headers=auth).status_code == 404, path
    monkeypatch.setattr(app, "fetch_dag_runs", lambda: [])  # a folder the DB no longer names is not served
    assert client.get(docs, headers=auth).status_code == 404
