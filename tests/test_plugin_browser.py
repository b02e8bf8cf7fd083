"""The "Replay runs" page in a real `airflow api-server` (SQLite metadata DB, simple auth manager with a known user),
over a run folder made by a real replay and the real quality functions, logged in through Airflow's token endpoint
(the JWT set as the `_token` cookie the Airflow UI uses) and loaded in headless Chromium, offline: the browser
resolves no host but the local server, as on an air-gapped cluster.

Screenshots of the runs page, the why-report and the Data Docs land in build/screenshots/ (or $REPLAY_SCREENSHOTS):
a person looks at them; the test asserts what a user must see there."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from headless_chromium import chromium

from airflow_env import ROOT, airflow, airflow_env, free_port

sys.path.insert(0, str(ROOT / "plugins"))  # replay_runs.runs: the run folder's name

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
USER, PASSWORD = "replay-viewer", "browser-pw-123"
SHOTS = Path(os.environ.get("REPLAY_SCREENSHOTS") or ROOT / "build" / "screenshots")
START_TIMEOUT = 420  # seconds: a loaded 2-core machine starts the API server slowly

def _run(*args: str, timeout: float = 900, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYSPARK_PYTHON": sys.executable, **(env or {})})
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


DAG = "event_time_backfill"
DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]
NOW = datetime.now(timezone.utc).replace(microsecond=0)
# Five runs of the backfill DAG, newest first on the page: one replaying now (job 1 of 2 has committed its first
# partition), one that failed in its second job (1 day a job), one cancelled (marked failed in Airflow) in its second
# job, one refused before it wrote anything (end before start), one that replayed the range and passed DQ.
RUNNING = f"manual__{(NOW - timedelta(minutes=4)).isoformat()}"
STOPPED = f"manual__{(NOW - timedelta(minutes=20)).isoformat()}"  # failed in its second job, after 2024-01-01
CANCELLED = f"manual__{(NOW - timedelta(minutes=30)).isoformat()}"  # marked failed while its second job ran
REFUSED = f"manual__{(NOW - timedelta(minutes=40)).isoformat()}"
FAR = f"manual__{(NOW - timedelta(minutes=50)).isoformat()}"  # its output is outside the runs root; its DQ failed
DRY = f"manual__{(NOW - timedelta(minutes=60)).isoformat()}"  # a dry run of the same output: writes no folder
FAR_WHY = "data quality FAILED 1/12: windows: no duplicate firing"
DONE = f"manual__{(NOW - timedelta(hours=2)).isoformat()}"
# The lines the runs' tasks kept (XCom replay_failure), as the page shows them under the state.
REFUSED_WHY = "Refused: Last day: 2024-01-01 is before the first day 2024-01-05 (the range is inclusive)"
STOPPED_WHY = "the Spark job failed: replay: 2024-01-02: OutputLocked: out/demo_partitioned/_lock is held by pid 7"
ADMIN, ADMIN_PASSWORD = "replay-admin", "browser-admin-pw-123"


def _folder(run_id: str) -> str:
    from replay_runs.runs import safe_run_id

    return safe_run_id(run_id)


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory) -> Path:
    """What the backfill DAG leaves for a run of 3 days, made by the steps its tasks run: the effective config, the
    plan record, a real `replay run --partitions` (one Spark application), done markers, a real `replay quality` (the
    GX suites with Data Docs and the why-report, named after the run) and the run report; and the records of a second
    run of the same output that is replaying its second partition."""
    import yaml

    from event_replay.quality.docs_assets import assets_dir

    # Without the vendored CSS/JS the Data Docs keep their CDN links and render unstyled offline.
    assert assets_dir().is_dir(), f"no Data Docs assets in {assets_dir()}: make data-docs-assets " \
                                  "(make test-integration builds them)"
    from event_replay.orchestration.report import (build_report, write_chunk_record, write_plan_record,
                                                   write_report)

    base = tmp_path_factory.mktemp("replay")
    log, out = base / "log", base / "runs" / "demo_partitioned"
    _run(sys.executable, "-m", "event_replay.samples.days", "--out", str(log), "--first-day", DAYS[0],
         "--days", str(len(DAYS)), "--rows-per-day", "400", "--splits", "4", "--seed", "7")
    cfg = yaml.safe_load((ROOT / "jobs" / "configs" / "demo_partitioned.yaml").read_text())
    cfg["source"]["path"], cfg["output"]["path"] = str(log), str(out)
    run = out / "_airflow" / _folder(DONE)
    run.mkdir(parents=True)
    job = run / "job.yaml"
    job.write_text(yaml.safe_dump(cfg, sort_keys=False))
    write_plan_record(run, DAYS, partitions_per_job=31)
    conf = ["--conf", "spark.sql.shuffle.partitions=4", "--conf", "spark.default.parallelism=2"]
    _run(str(BIN / "replay"), "run", "--config", str(job), "--master", "local[2]", *conf,
         "--partitions", f"{DAYS[0]}..{DAYS[-1]}", "--first", "--end-of-input", "flush")
    (run / "done").mkdir()
    for d in DAYS:
        (run / "done" / d).touch()
    _run(str(BIN / "replay"), "quality", "--config", str(job), "--out", str(run), "--run-name", DONE,
         env={"REPLAY_SPARK_MASTER": "local[2]"})
    dq = json.loads((run / "data_quality.json").read_text())
    assert dq["success"], dq
    write_report(build_report(str(out), DAYS, dag_id=DAG, run_id=DONE, config_file="jobs/configs/demo_partitioned.yaml",
                              config_path=str(job), dq=f"passed ({dq['expectations']} expectations)",
                              data_docs=dq["data_docs"], why_report=dq["why_report"]), run)
    assert (run / "_data_docs" / "index.html").is_file() and (run / "why_report" / "timelines.png").is_file()
    # The running one: planned 3 days in jobs of 2; job 1 (01..02) is on and its range job committed 2024-01-01.
    live = out / "_airflow" / _folder(RUNNING)
    live.mkdir()
    (live / "job.yaml").write_text(job.read_text())
    write_plan_record(live, DAYS, partitions_per_job=2)
    write_chunk_record(live, 1, 2, DAYS[:2])
    (out / "_range.json").write_text(json.dumps({"request": {"first_id": DAYS[0], "last_id": DAYS[1]},
                                                 "committed": DAYS[0]}))
    # The failed one: 1 day a job, job 1 done, job 2 (2024-01-02) failed; the _range.json above is not its chunk's.
    stopped = out / "_airflow" / _folder(STOPPED)
    (stopped / "done").mkdir(parents=True)
    (stopped / "job.yaml").write_text(job.read_text())
    write_plan_record(stopped, DAYS, partitions_per_job=1)
    (stopped / "done" / DAYS[0]).touch()
    write_chunk_record(stopped, 2, 3, DAYS[1:2])
    # The cancelled one: 1 day a job, job 1 done, job 2 on when the run was marked failed (on_kill's record).
    from event_replay.orchestration.cancel import write_cancel_record
    from event_replay.orchestration.record import new_record, write_record

    cancelled = out / "_airflow" / _folder(CANCELLED)
    (cancelled / "done").mkdir(parents=True)
    (cancelled / "job.yaml").write_text(job.read_text())
    write_plan_record(cancelled, DAYS, partitions_per_job=1)
    (cancelled / "done" / DAYS[0]).touch()
    write_chunk_record(cancelled, 2, 3, DAYS[1:2])
    write_cancel_record(cancelled, 2, 3, DAYS[1:2])
    # The finished run's record (what the replay task writes before its first job).
    planned = {"plan": {"runs": [{"partition": d} for d in DAYS], "missing": []}, "source_path": str(log),
               "config_path": str(job), "config_file": "jobs/configs/demo_partitioned.yaml", "start": DAYS[0],
               "end": DAYS[-1], "partitions_per_job": 31}
    record = new_record(planned, DAG, DONE)
    record["spark"]["master"] = "local[2]"
    record["jobs"] = [{"job": 1, "partitions": DAYS, "seconds": 41.5, "rows_read": 1200}]
    write_record(run, record)
    # A sparse log replayed from the CLI: 300 rows over 8 hours, every split idle most of the time.
    sparse_log, sparse_out = base / "sparse-log", base / "runs" / "sparse"
    _run(str(BIN / "replay"), "sample", "--out", str(sparse_log), "--rows", "300", "--splits", "3", "--rate", "0.01",
         "--seed", "7")
    sparse = yaml.safe_load((ROOT / "jobs" / "configs" / "demo.yaml").read_text())
    sparse["source"]["path"], sparse["output"]["path"] = str(sparse_log), str(sparse_out)
    (base / "sparse.yaml").write_text(yaml.safe_dump(sparse, sort_keys=False))
    _run(str(BIN / "replay"), "run", "--config", str(base / "sparse.yaml"), "--master", "local[2]", *conf)
    _run(str(BIN / "replay"), "why", "--config", str(base / "sparse.yaml"), env={"REPLAY_SPARK_MASTER": "local[2]"})
    # The finished run was compared with the live job (its compare_live task's summary): the "vs live" column.
    (run / "compare").mkdir()
    (run / "compare" / "summary.json").write_text(json.dumps(
        {"totals": {"agreement_pct": 99.6047, "windows": 253, "differing": 1}, "min_agreement_pct": 99.0}))
    (run / "compare" / "index.html").write_text("<html><body>compare page</body></html>")
    write_report(json.loads((run / "report.json").read_text()), run)  # again, with its vs-live line
    _far_output(base, out, run)
    return base / "runs"


def _far_output(base: Path, out: Path, done: Path) -> None:
    """An output outside the runs root (_far_out) holding the finished run's partitions, and the folder of a run on
    it whose data quality failed after replaying them all (no report: the report task never ran)."""
    from event_replay.orchestration.report import write_plan_record

    far = _far_out(base)
    shutil.copytree(out, far, ignore=shutil.ignore_patterns("_airflow", "_range.json", "_lock"))
    run = far / "_airflow" / _folder(FAR)
    write_plan_record(run, DAYS, partitions_per_job=31)
    (run / "done").mkdir()
    for d in DAYS:
        (run / "done" / d).touch()
    shutil.copytree(done / "_data_docs", run / "_data_docs")
    (run / "data_quality.json").write_text(json.dumps({"success": False, "expectations": 12, "failed": 1,
                                                       "failed_names": ["windows: no duplicate firing"]}))


def _far_out(base: Path) -> Path:
    return base / "elsewhere" / "demo_far"


def _add_dag_runs(env: dict[str, str], far_out: Path) -> None:
    """The runs in Airflow's metadata DB, as the scheduler records them (the page reads state and times there), the
    failure lines three of them kept, and the validate results of the two on the output outside the root."""
    request = {"output_path": str(far_out), "config_file": "jobs/configs/demo_partitioned.yaml", "start": DAYS[0],
               "end": DAYS[-1], "config_raw": {"window": {"type": "tumbling"}}}
    far_request = {**request, "run_dir": str(far_out / "_airflow" / _folder(FAR)), "dry_run": False}
    dry_request = {**request, "run_dir": str(far_out / "_airflow" / _folder(DRY)), "dry_run": True}
    dry_note = {"summary": f"dry run: {len(DAYS)} partitions, 1 Spark jobs, 1,200 rows, {len(DAYS)} already committed",
                "dry_run": {"output": str(far_out), "partitions": [{"partition": d} for d in DAYS]}}
    script = f"""
from datetime import datetime, timedelta
import uuid
from sqlalchemy import insert, select
from airflow.models.dagrun import DagRun
from airflow.models.taskinstance import TaskInstance
from airflow.models.xcom import XComModel
from airflow.utils.session import create_session
import json
now = datetime.fromisoformat({NOW.isoformat()!r})
runs = [({RUNNING!r}, "running", now - timedelta(minutes=4), None, {{}}),
        ({STOPPED!r}, "failed", now - timedelta(minutes=20), now - timedelta(minutes=18), {{}}),
        ({CANCELLED!r}, "failed", now - timedelta(minutes=30), now - timedelta(minutes=28), {{}}),
        ({REFUSED!r}, "failed", now - timedelta(minutes=40), now - timedelta(minutes=40, seconds=-6),
         {{"config": "jobs/configs/demo_partitioned.yaml", "start_date": "2024-01-05", "end_date": "2024-01-01"}}),
        ({FAR!r}, "failed", now - timedelta(minutes=50), now - timedelta(minutes=46), {{}}),
        ({DRY!r}, "success", now - timedelta(minutes=60), now - timedelta(minutes=59), {{}}),
        ({DONE!r}, "success", now - timedelta(hours=2), now - timedelta(hours=2, seconds=-97), {{}})]
with create_session() as s:
    for run_id, state, start, end, conf in runs:
        s.execute(insert(DagRun.__table__).values(dag_id={DAG!r}, run_id=run_id, run_type="manual", state=state,
                  start_date=start, end_date=end, logical_date=start, run_after=start, queued_at=start, conf=conf,
                  clear_number=0))
    # What the failed runs' tasks kept for the page (orchestration/failures.py): the XCom replay_failure of their
    # failed task instance.
    # And what the validate task returned for the runs on the output outside the root (the page finds it there),
    # the dry run's findings.
    for run_id, task_id, state, key, value in (
            ({REFUSED!r}, "validate", "failed", "replay_failure", {REFUSED_WHY!r}),
            ({STOPPED!r}, "replay_partitions", "failed", "replay_failure", {STOPPED_WHY!r}),
            ({FAR!r}, "validate", "success", "return_value", json.dumps({far_request!r})),
            ({FAR!r}, "data_quality", "failed", "replay_failure", {FAR_WHY!r}),
            ({DRY!r}, "validate", "success", "return_value", json.dumps({dry_request!r})),
            ({DRY!r}, "replay_partitions", "skipped", "replay_dry_run", json.dumps({dry_note!r}))):
        dag_run_id, started = s.execute(select(DagRun.id, DagRun.start_date).where(DagRun.run_id == run_id)).one()
        s.execute(insert(TaskInstance.__table__).values(id=uuid.uuid4(), dag_id={DAG!r}, run_id=run_id,
                  task_id=task_id, map_index=-1, pool="default_pool", state=state, try_number=1,
                  start_date=started, end_date=started))
        s.execute(insert(XComModel.__table__).values(dag_run_id=dag_run_id, task_id=task_id, map_index=-1,
                  key=key, dag_id={DAG!r}, run_id=run_id, value=value, timestamp=now))
"""
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]


@pytest.fixture(scope="module")
def api_server(runs_root, tmp_path_factory):
    home = tmp_path_factory.mktemp("airflow-home")
    (home / "passwords.json").write_text(json.dumps({USER: PASSWORD, ADMIN: ADMIN_PASSWORD}))
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = airflow_env(home, **{
        "AIRFLOW__CORE__AUTH_MANAGER": "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:viewer,{ADMIN}:admin",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__API__BASE_URL": base_url,
        "AIRFLOW__API_AUTH__JWT_SECRET": "plugin-browser-test-jwt-secret-0123456789abcdef0123456789abcdef",
        "REPLAY_RUNS_ROOT": str(runs_root),
    })
    airflow(env, "db", "migrate", timeout=600)
    airflow(env, "dags", "reserialize", timeout=900)  # the DAGs' trigger forms, without a DAG processor
    _add_dag_runs(env, _far_out(runs_root.parent))
    log = open(home / "api-server.log", "w")
    proc = subprocess.Popen([str(BIN / "airflow"), "api-server", "--host", "127.0.0.1", "--port", str(port),
                             "--workers", "1"], env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)  # own process group: stopped with its workers
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/api/v2/monitor/health", timeout=10):
                    break
            except (urllib.error.URLError, OSError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"api-server did not start:\n{(home / 'api-server.log').read_text()[-5000:]}")
                time.sleep(2)
        yield base_url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        log.close()


def _token(base_url: str, user: str = USER, password: str = PASSWORD) -> str:
    req = urllib.request.Request(f"{base_url}/auth/token", data=json.dumps({"username": user, "password": password})
                                 .encode(), headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())["access_token"]


@pytest.fixture()
def browser(tmp_path):
    with chromium(tmp_path / "chrome-profile") as driver:
        yield driver


def test_unauthenticated_page_is_refused(api_server):
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{api_server}/replay-runs/", timeout=60)
    assert e.value.code in (401, 403)


def _wait_images(browser) -> None:
    for _ in range(60):  # images load after the page
        if browser.execute_script("return [...document.images].every(i => i.complete)"):
            return
        time.sleep(1)


def _broken_links(browser) -> list[str]:
    """Every link and image of the page fetched with the page's session: those that do not answer 200."""
    return browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const urls = [...document.querySelectorAll('a[href], img[src]')].map(e => e.href || e.src)
            .filter(u => u.startsWith(location.origin));
        Promise.all(urls.map(u => fetch(u, {credentials: 'include'}).then(r => [u, r.status], e => [u, 0])))
            .then(rs => done(rs.filter(([u, s]) => s !== 200).map(([u, s]) => u + ' ' + s)));""")


VALIDATION_ROW = "tr.clickable-row[data-href*='validations/']"


def _validation_rows(browser) -> list[tuple[str, str]]:
    """(link, text) of the Data Docs index's validation rows, once bootstrap-table has stopped redrawing them."""
    seen = None
    for _ in range(30):
        rows = browser.execute_script(f"return [...document.querySelectorAll(\"{VALIDATION_ROW}\")]"
                                      ".map(tr => [tr.dataset.href, tr.innerText])")
        if rows and rows == seen:
            return [tuple(r) for r in rows]
        seen = rows
        time.sleep(1)
    return [tuple(r) for r in seen or []]


def _shot(browser, name: str, height: int | None = None) -> Path:
    """The whole page in one picture (or a window of `height`), under SHOTS."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    if height is None:
        browser.set_window_size(1400, 700)  # measured in a short window: a tall one would leave blank space
        page, chrome = browser.execute_script("return [Math.max(document.documentElement.scrollHeight, "
                                              "document.body.scrollHeight), window.outerHeight - window.innerHeight]")
        height = min(max(700, page + chrome + 10), 6000)
    browser.set_window_size(1400, height)
    time.sleep(0.3)
    path = SHOTS / name
    browser.save_screenshot(str(path))
    assert path.stat().st_size > 10_000
    return path


def _login(browser, api_server, user: str = USER, password: str = PASSWORD) -> None:
    browser.get(f"{api_server}/replay-runs/")  # unauthenticated browser: sent to Airflow's login page
    assert "login" in browser.current_url.lower(), browser.current_url
    browser.add_cookie({"name": "_token", "value": _token(api_server, user, password), "path": "/"})
    browser.set_script_timeout(120)


def _n(text: str) -> int:
    return int(text.replace(",", ""))


def _style(browser, selector: str, prop: str) -> str:
    return browser.execute_script(f"return getComputedStyle(document.querySelector({selector!r}))[{prop!r}]")


def _theme(browser, theme: str | None) -> None:
    """The Airflow UI's theme choice (next-themes' localStorage `theme`), as its toggle sets it."""
    browser.execute_script("theme = arguments[0]; theme ? localStorage.setItem('theme', theme) : "
                           "localStorage.removeItem('theme')", theme)
    browser.refresh()


def _row(browser, run_id: str):
    from selenium.webdriver.common.by import By

    return browser.find_element(By.ID, f"run-{_folder(run_id)}")


def _cells(row) -> list[str]:
    from selenium.webdriver.common.by import By

    return [" ".join(c.text.split()) for c in row.find_elements(By.TAG_NAME, "td")]


def test_runs_page_in_chromium_light_and_dark(api_server, browser):
    """The runs page: Airflow runs newest first (failed included), each run id linked to its Airflow run, state,
    start, duration, partitions with the progress of the running one; every link answers 200; styled like the
    Airflow UI, light and dark (the UI's theme choice), alone and inside the UI's own frame."""
    from urllib.parse import quote

    from selenium.webdriver.common.by import By

    _login(browser, api_server)
    browser.get(f"{api_server}/replay-runs/")
    heads = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "table#runs thead th")]
    assert heads[:5] == ["run", "state", "start (UTC)", "duration", "partitions"], heads
    links = browser.find_elements(By.CSS_SELECTOR, "table#runs tbody tr a.airflow-run")
    order = [RUNNING, STOPPED, CANCELLED, REFUSED, FAR, DRY, DONE]
    assert [a.text for a in links] == order  # newest first
    assert [a.get_attribute("href") for a in links] == [f"{api_server}/dags/{DAG}/runs/{quote(r, safe='')}"
                                                        for r in order]
    assert browser.find_element(By.ID, "summary").text.startswith("8 runs, newest first")  # and the sparse CLI run
    running, stopped, cancelled, refused, done = (_cells(_row(browser, r))
                                                  for r in (RUNNING, STOPPED, CANCELLED, REFUSED, DONE))
    assert stopped[1] == f"failed {STOPPED_WHY}" and stopped[3] == "2.0 min", stopped  # why, under the state
    assert stopped[4] == f"{DAYS[0]} to {DAYS[-1]} (3) 1/3 done stopped in {DAYS[1]}", stopped
    assert cancelled[1] == "failed cancelled after partition 1 of 3", cancelled
    assert running[1] == "running" and running[3].endswith("so far"), running
    assert running[4] == f"{DAYS[0]} to {DAYS[-1]} (3) 1/3 done replaying {DAYS[1]}" and running[9] == "pending"
    assert refused[1] == f"failed {REFUSED_WHY}" and refused[3] == "6.0 s", refused
    assert refused[4] == "requested 2024-01-05 to 2024-01-01", refused
    assert done[1] == "success" and done[3] == "97.0 s" and done[4].endswith("3/3 done"), done
    for cells, start in ((running, NOW - timedelta(minutes=4)), (done, NOW - timedelta(hours=2))):
        assert cells[2] == start.strftime("%Y-%m-%d %H:%M:%S"), cells
    version = f"v{_project_version()}"
    assert done[0] == f"{DONE} {DAG}, output demo_partitioned config demo_partitioned.yaml, {version}", done
    assert done[9] == "pass" and done[10] == "report why-report Data Docs", done
    assert done[11] == "99.60% 1 of 253 windows differ", done  # vs live, above its threshold
    # The run whose output is outside the runs root: as true as any other (partitions, progress, counts, DQ, links).
    far, dry = _cells(_row(browser, FAR)), _cells(_row(browser, DRY))
    far_out = browser.execute_script("return arguments[0].querySelector('.muted code').textContent", _row(browser, FAR))
    assert far_out.endswith("/elsewhere/demo_far") and far_out.startswith("/"), far_out
    assert far[1] == f"failed {FAR_WHY}" and far[4] == f"{DAYS[0]} to {DAYS[-1]} (3) 3/3 done", far
    assert far[5:9] == done[5:9] and far[9] == "fail" and far[10] == "Data Docs", (far, done)
    assert dry[0].endswith(f"output {far_out} config demo_partitioned.yaml"), dry
    assert dry[1].startswith("dry run dry run: 3 partitions") and dry[4].endswith("3 of 3 committed in the output"), dry
    # A long run id wraps inside its cell: it never runs into the state column.
    for r in (RUNNING, DONE):
        inside = browser.execute_script(
            "const a = arguments[0].querySelector('a.airflow-run'), td = a.closest('td');"
            "return a.getBoundingClientRect().right <= td.getBoundingClientRect().right;", _row(browser, r))
        assert inside, r
    assert _n(done[5]) == 1200 and _n(done[6]) > 0, done
    assert _broken_links(browser) == []
    # Styled: Airflow's font and colours, not the browser's defaults; light by default, dark when the UI says so.
    assert "Inter" in _style(browser, "body", "fontFamily")
    assert _style(browser, "body", "backgroundColor") == "rgb(255, 255, 255)"
    assert _style(browser, "table#runs th", "backgroundColor") not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)")
    assert _style(browser, "table#runs td", "borderTopStyle") == "solid"
    light = _shot(browser, "replay-runs-light.png")
    _theme(browser, "dark")
    assert _style(browser, "body", "backgroundColor") == "rgb(9, 9, 11)"
    assert _style(browser, "body", "color") not in ("rgb(0, 0, 0)", "rgb(9, 9, 11)")
    dark = _shot(browser, "replay-runs-dark.png")
    # Inside the Airflow UI (Browse > Replay runs): the UI's frame around the page, both in the UI's theme.
    shots = []
    for theme in ("dark", "light"):
        _theme(browser, theme)
        browser.get(f"{api_server}/plugin/replay-runs")
        frame = None
        for _ in range(60):
            frames = browser.find_elements(By.TAG_NAME, "iframe")
            if frames:
                frame = frames[0]
                browser.switch_to.frame(frame)
                ready = browser.find_elements(By.CSS_SELECTOR, "table#runs tbody tr")
                bg = _style(browser, "body", "backgroundColor") if ready else None
                # every column in view inside the UI's frame (1400 px window): no sideways scrolling
                overflow = browser.execute_script("return document.documentElement.scrollWidth - "
                                                  "document.documentElement.clientWidth") if ready else None
                browser.switch_to.default_content()
                if ready:
                    break
            time.sleep(1)
        assert frame is not None and ready, browser.page_source[:2000]
        assert bg == ("rgb(9, 9, 11)" if theme == "dark" else "rgb(255, 255, 255)"), (theme, bg)
        assert overflow <= 0, f"the runs table is {overflow} px wider than the Airflow UI's frame"
        time.sleep(1)
        shots.append(_shot(browser, f"replay-runs-in-airflow-{theme}.png", height=900))
    # The finished run's row in the UI's frame at 1400 px: its "vs live" cell whole, inside the frame.
    browser.switch_to.frame(browser.find_elements(By.TAG_NAME, "iframe")[0])
    inside = browser.execute_script(
        "const td = arguments[0].querySelector('td.live'); td.scrollIntoView({block: 'center'});"
        "return td.getBoundingClientRect().right <= document.documentElement.clientWidth;", _row(browser, DONE))
    browser.switch_to.default_content()
    assert inside, "the vs live cell is cut off in the Airflow UI's frame"
    time.sleep(0.5)
    shots.append(_shot(browser, "replay-runs-in-airflow-vs-live.png", height=900))
    print(f"screenshots: {light} {dark} {' '.join(map(str, shots))}")


def _project_version() -> str:
    """The version cell's text for this checkout: `0.1.0 46a2f0e` (+ when the checkout has changes)."""
    from event_replay.orchestration.record import project_version

    v = project_version()
    return " ".join(x for x in (v["version"], (v["commit"] or "")[:7] + ("+" if v["dirty"] else "")) if x)


def test_run_record_page(api_server, browser):
    """The finished run's version links to its run record: version, config, input per partition, Spark."""
    from selenium.webdriver.common.by import By

    _login(browser, api_server)
    browser.get(f"{api_server}/replay-runs/")
    _row(browser, DONE).find_element(By.CSS_SELECTOR, "a.version").click()
    facts = {tr.find_element(By.TAG_NAME, "th").text: tr.find_element(By.TAG_NAME, "td").text
             for tr in browser.find_elements(By.CSS_SELECTOR, "table#record tr")}
    assert facts["run"] == DONE and facts["config"] == "jobs/configs/demo_partitioned.yaml", facts
    assert facts["project version"] == "0.1.0" and facts["Spark"].endswith("on local[2]"), facts
    parts = [tr.text.split() for tr in browser.find_elements(By.CSS_SELECTOR, "table#record-input tbody tr")]
    assert [p[0] for p in parts] == DAYS and all(p[1] == "1" for p in parts), parts
    assert "window:" in browser.find_element(By.ID, "record-config").text
    assert _broken_links(browser) == []
    print(f"screenshots: {_shot(browser, 'run-record.png')}")


def test_run_report_page(api_server, browser):
    """The finished run's report as a page, from its row: the same totals as the row, its columns named for their
    rows (firings), the vs-live line linking the compare page, every link answers."""
    from selenium.webdriver.common.by import By

    _login(browser, api_server)
    browser.get(f"{api_server}/replay-runs/")
    row = _cells(_row(browser, DONE))
    _row(browser, DONE).find_element(By.LINK_TEXT, "report").click()
    heads = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "table#report-partitions th")]
    assert heads[:3] == ["partition", "firings", "late rows"] and "windows" not in heads, heads
    total = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "table#report-partitions tr.total td")]
    assert (_n(total[1]), _n(total[2])) == (_n(row[6]), _n(row[7])), (total, row)
    facts = {tr.find_element(By.TAG_NAME, "th").text: tr.find_element(By.TAG_NAME, "td")
             for tr in browser.find_elements(By.CSS_SELECTOR, "table#facts tr")}
    live = facts["vs live"].find_element(By.TAG_NAME, "a")
    assert live.text == "99.60% agreement: 1 of 253 windows differ (threshold 99%)", live.text
    assert live.get_attribute("href").endswith(f"/_airflow/{_folder(DONE)}/compare/index.html")
    assert _broken_links(browser) == []
    print(f"screenshots: {_shot(browser, 'run-report.png')}")


def test_sparse_why_report(api_server, browser):
    """300 rows over 8 hours (the CLI run `sparse`): its why-report draws per bucket (the page says how long one is
    and what the lanes' heights mean), the lag over the whole replay clock, and its bucket data answers."""
    from selenium.webdriver.common.by import By

    _login(browser, api_server)
    browser.get(f"{api_server}/replay-runs/why/sparse")
    _wait_images(browser)
    img = browser.find_element(By.CSS_SELECTOR, "img#timelines-png")
    assert browser.execute_script("return arguments[0].naturalWidth", img) == 1200
    text = browser.find_element(By.ID, "timelines").find_element(By.XPATH, "following-sibling::p").text
    assert "share of the bucket's time" in text and "time buckets of" in text, text
    assert "on average and at most" in text, text  # the lag is defined: the stream keeps its watermark while idle
    assert browser.find_element(By.ID, "timelines-data").text == "timelines.parquet"
    assert browser.find_element(By.ID, "window-holders").text == "window_holders.parquet"
    assert _broken_links(browser) == []
    print(f"screenshots: {_shot(browser, 'why-report-sparse.png')}")


def test_trigger_form_refuses_a_bad_duration(api_server, browser):
    """The event_time_backfill trigger form with an override that is no duration: Trigger is refused with the
    schema's reason, and no run exists afterwards."""
    from selenium.webdriver.common.keys import Keys

    def run_ids() -> list[str]:
        req = urllib.request.Request(f"{api_server}/api/v2/dags/{DAG}/dagRuns?limit=100",
                                     headers={"Authorization": f"Bearer {_token(api_server, ADMIN, ADMIN_PASSWORD)}"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return sorted(x["dag_run_id"] for x in json.loads(r.read())["dag_runs"])

    before = run_ids()
    _login(browser, api_server, ADMIN, ADMIN_PASSWORD)
    browser.set_window_size(1400, 1000)
    browser.get(f"{api_server}/dags/{DAG}")
    _wait_for(browser, "//button[normalize-space()='Trigger']").click()
    field = _wait_for(browser, "//*[@id='element_idle_timeout']")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", field)
    field.click()
    field.send_keys("5 parsecs", Keys.TAB)
    trigger = _wait_for(browser, "//div[@role='dialog']//button[normalize-space()='Trigger']")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", trigger)
    trigger.click()
    # The API refuses the run (400) and the dialog says why at its top: the field (its title, as the form shows it),
    # what it expects, the value; no regex.
    alert = _wait_for(browser, "//*[@data-testid='error-alert'][contains(., 'idle_timeout')]")
    text = alert.text
    assert "400 Bad Request" in text and ("Invalid input for param idle_timeout: 'Override watermark.idle_timeout: "
                                          "a duration such as 500ms, 5s, 2m, 1h, 1d or PT5S' was expected") in text, text
    assert "'5 parsecs'" in text and "pattern" not in text and "\\d" not in text, text
    browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", alert)
    time.sleep(1)
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / "trigger-form-refused.png"))
    assert run_ids() == before  # refused before a run exists
    print(f"screenshots: {SHOTS / 'trigger-form-refused.png'}")


def _wait_for(browser, xpath: str, timeout: float = 120):
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in browser.find_elements(By.XPATH, xpath) if e.is_displayed()]
        if found:
            return found[-1]
        time.sleep(0.5)
    raise AssertionError(f"{xpath} not on the page:\n{browser.page_source[-3000:]}")


def test_why_report_and_data_docs_in_chromium(api_server, browser):
    """From the finished run's row: its why-report (the same totals as the row, a plot that loaded, every link
    answers, a way back to the runs) and its Data Docs (styled offline, every validation listed and named after
    its data asset and the run, a way back), light and dark."""
    from selenium.webdriver.common.by import By

    _login(browser, api_server)
    browser.get(f"{api_server}/replay-runs/")
    row = _cells(_row(browser, DONE))
    rows_read, firings, late = _n(row[5]), _n(row[6]), _n(row[7])

    _row(browser, DONE).find_element(By.LINK_TEXT, "why-report").click()
    _wait_images(browser)
    img = browser.find_element(By.CSS_SELECTOR, "img#timelines-png")
    assert browser.execute_script("return arguments[0].naturalWidth", img) > 0
    table = browser.find_elements(By.CSS_SELECTOR, "table#partitions tbody tr")
    per_day = [[c.text for c in tr.find_elements(By.TAG_NAME, "td")] for tr in table]
    assert [r[0] for r in per_day] == [*DAYS, "total"], per_day
    total = per_day[-1]
    assert (_n(total[1]), _n(total[3]), _n(total[6])) == (rows_read, late, firings), (total, row)
    assert sum(_n(r[1]) for r in per_day[:-1]) == rows_read and sum(_n(r[6]) for r in per_day[:-1]) == firings
    glance = browser.find_element(By.ID, "glance").text
    assert glance.startswith(f"{rows_read:,} rows read over 3 partitions ({DAYS[0]} to {DAYS[-1]})"), glance
    assert _broken_links(browser) == []
    assert "Inter" in _style(browser, "body", "fontFamily")
    why_png = _shot(browser, "why-report.png")
    assert browser.find_element(By.ID, "runs-link").get_attribute("href") == f"{api_server}/replay-runs/"

    # The Data Docs, offline: styled by the assets served with them, every validation, a way back to the runs.
    browser.find_element(By.LINK_TEXT, "Data Docs").click()
    _wait_images(browser)
    assert browser.execute_script("return getComputedStyle(document.querySelector('nav.navbar')).display") == "flex", \
        "Data Docs unstyled: bootstrap did not load offline"
    assert browser.execute_script("return document.querySelector('.navbar-brand img').naturalWidth") > 0  # the logo
    validations = _validation_rows(browser)  # drawn by jQuery + bootstrap-table (vendored): clickable rows
    assert len({href for href, _ in validations}) == 4, browser.page_source[:3000]
    texts = [text for _, text in validations]  # each names its data asset (dataset, folder, partitions) and the run
    assert all(DONE in t for t in texts), texts
    assert any("windows/ of " in t and f"partitions {DAYS[0]}..{DAYS[-1]} (3)" in t for t in texts), texts
    back = browser.find_element(By.ID, "runs-link")
    assert back.get_attribute("href") == f"{api_server}/replay-runs/#run-{_folder(DONE)}"
    assert _broken_links(browser) == []
    docs_png = _shot(browser, "data-docs.png")
    # Dark (the system's, as GX's pages follow it): GX's dark logo, served with the site instead of from S3.
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme",
                                                                         "value": "dark"}]})
    browser.refresh()
    _validation_rows(browser)
    logo = _style(browser, ".navbar-brand a", "backgroundImage")
    assert logo.startswith(f'url("{api_server}/replay-runs/files/') and logo.endswith('/logo-long-dark.png")'), logo
    assert browser.execute_async_script("fetch(arguments[0]).then(r => arguments[1](r.status))", logo[5:-2]) == 200
    docs_dark_png = _shot(browser, "data-docs-dark.png")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    browser.refresh()
    _validation_rows(browser)

    # A validation result: its data asset and run named in its header.
    browser.execute_script(f"document.querySelector(\"{VALIDATION_ROW}\").cells[0].click()")
    for _ in range(30):
        if "/validations/" in browser.current_url:
            break
        time.sleep(1)
    assert "/validations/" in browser.current_url, browser.current_url
    _wait_images(browser)
    # the breadcrumb (long: it names the data asset) stays inside GX's top bar, its first item in view
    assert browser.execute_script("return document.querySelector('.ge-breadcrumbs').getBoundingClientRect().top") >= 0
    header = browser.find_element(By.CSS_SELECTOR, ".alert-secondary").text
    assert "Data asset: " in header and " of " in header and "None" not in header, header
    assert DONE in browser.find_element(By.TAG_NAME, "body").text
    assert _broken_links(browser) == []
    result_png = _shot(browser, "data-docs-result.png")
    browser.find_element(By.ID, "runs-link").click()  # back to the run's row
    assert browser.current_url == f"{api_server}/replay-runs/#run-{_folder(DONE)}", browser.current_url
    assert browser.find_element(By.ID, f"run-{_folder(DONE)}").is_displayed()
    print(f"screenshots: {why_png} {docs_png} {docs_dark_png} {result_png}")


def test_waiting_and_already_committed_runs_in_chromium(api_server, browser, runs_root):
    """Two more runs of the finished run's output, for a moment: one waiting for the output's turn (its record names
    the run holding it, as the replay task writes it: orchestration/turn.py), one that replayed nothing because the
    finished run had committed its range (orchestration/committed.py). Their rows say so under the progress."""
    from event_replay.orchestration.record import write_record
    from event_replay.orchestration.report import build_report, write_plan_record, write_report
    from event_replay.orchestration.turn import turn_path, waiting_note

    out = runs_root / "demo_partitioned"
    waiting, skipped = f"manual__{NOW.isoformat()}-waits", f"manual__{NOW.isoformat()}-skips"
    holder = {"run_id": RUNNING, "dag_id": DAG, "pid": 4242, "host": "worker-1", "started": NOW.isoformat(),
              "args": ["airflow", "tasks", "run"]}
    made = [out / "_airflow" / _folder(r) for r in (waiting, skipped)]
    try:
        write_plan_record(made[0], DAYS, partitions_per_job=2)
        write_record(made[0], {"run_id": waiting, "dag_id": DAG, "waiting": waiting_note(
            str(out), holder, json.dumps(holder), turn_path(out / "_airflow", str(out)))})
        write_plan_record(made[1], DAYS, partitions_per_job=2)
        write_record(made[1], {"run_id": skipped, "dag_id": DAG, "skipped": {"committed_by": {DONE: DAYS}}})
        write_report(build_report(str(out), DAYS, dag_id=DAG, run_id=skipped, config_file="demo_partitioned.yaml",
                                  config_path=str(out / "_airflow" / _folder(DONE) / "job.yaml"),
                                  dq="not run (data quality off)"), made[1])
        _login(browser, api_server)
        browser.get(f"{api_server}/replay-runs/")
        waits, skips = _cells(_row(browser, waiting)), _cells(_row(browser, skipped))
        assert waits[4] == (f"{DAYS[0]} to {DAYS[-1]} (3) 0/3 done waiting for run {RUNNING}: it holds the output"), \
            waits
        assert skips[1] == "success" and skips[4] == (f"{DAYS[0]} to {DAYS[-1]} (3) 3/3 done {DAYS[0]}..{DAYS[-1]} "
                                                      f"(3 partitions) already committed by run {DONE}"), skips
        print(f"screenshots: {_shot(browser, 'replay-runs-waiting-and-skipped.png')}")
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)
