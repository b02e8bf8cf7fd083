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
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from airflow_env import ROOT, airflow, airflow_env

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
CHROMIUM, CHROMEDRIVER = shutil.which("chromium") or "/usr/bin/chromium", shutil.which("chromedriver")
USER, PASSWORD = "replay-viewer", "browser-pw-123"
SHOTS = Path(os.environ.get("REPLAY_SCREENSHOTS") or ROOT / "build" / "screenshots")
START_TIMEOUT = 420  # seconds: a loaded 2-core machine starts the API server slowly

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(*args: str, timeout: float = 900) -> None:
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory) -> Path:
    from event_replay.quality.docs_assets import assets_dir

    # Without the vendored CSS/JS the Data Docs keep their CDN links and render unstyled offline.
    assert assets_dir().is_dir(), f"no Data Docs assets in {assets_dir()}: make data-docs-assets " \
                                  "(make test-integration builds them)"
    """A replay of a small sample, then GX validation (Data Docs) and the why-report on its outputs."""
    import yaml

    base = tmp_path_factory.mktemp("replay")
    log, out = base / "log", base / "runs" / "demo"
    _run(str(BIN / "replay"), "sample", "--out", str(log), "--rows", "200", "--splits", "2", "--keys", "3",
         "--files", "1")
    cfg = yaml.safe_load((ROOT / "jobs" / "configs" / "demo.yaml").read_text())
    cfg["source"]["path"], cfg["output"]["path"] = str(log), str(out)
    job = base / "job.yaml"
    job.write_text(yaml.safe_dump(cfg, sort_keys=False))
    conf = ["--conf", "spark.sql.shuffle.partitions=4", "--conf", "spark.default.parallelism=2"]
    _run(str(BIN / "replay"), "run", "--config", str(job), "--master", "local[2]", *conf)
    _run(sys.executable, "-c", f"""
from event_replay.semantics.config import load_config
from event_replay.spark import build_session
from event_replay.quality import validate, why_report
cfg = load_config({str(job)!r})
spark = build_session(master="local[2]", app_name="plugin-test-quality",
                      conf={{"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"}})
print(validate(cfg.output.path, cfg, spark=spark, run_name="cli").summary())
print(why_report(cfg.output.path, cfg, spark=spark))
spark.stop()
""")
    assert (out / "_data_docs" / "index.html").is_file() and (out / "why_report" / "timelines.png").is_file()
    return base / "runs"


@pytest.fixture(scope="module")
def api_server(runs_root, tmp_path_factory):
    home = tmp_path_factory.mktemp("airflow-home")
    (home / "passwords.json").write_text(json.dumps({USER: PASSWORD}))
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = airflow_env(home, **{
        "AIRFLOW__CORE__AUTH_MANAGER": "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:viewer",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__API__BASE_URL": base_url,
        "AIRFLOW__API_AUTH__JWT_SECRET": "plugin-browser-test-jwt-secret-0123456789abcdef0123456789abcdef",
        "REPLAY_RUNS_ROOT": str(runs_root),
    })
    airflow(env, "db", "migrate", timeout=600)
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


def _token(base_url: str) -> str:
    req = urllib.request.Request(f"{base_url}/auth/token", data=json.dumps({"username": USER, "password": PASSWORD})
                                 .encode(), headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())["access_token"]


@pytest.fixture()
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert os.path.exists(CHROMIUM) and CHROMEDRIVER, "chromium/chromedriver missing (.ci/run installs them in CI)"

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
              "--no-first-run", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
              "--window-size=1400,1800", f"--user-data-dir={tmp_path / 'chrome-profile'}",
              "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"):  # offline: no CDN, no internet
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(180)
    try:
        yield driver
    finally:
        driver.quit()


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


def _shot(browser, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1400, min(max(900, height + 150), 6000))  # the whole page in one picture
    path = SHOTS / name
    browser.save_screenshot(str(path))
    assert path.stat().st_size > 10_000
    return path


def test_plugin_page_in_chromium(api_server, browser):
    from selenium.webdriver.common.by import By

    browser.get(f"{api_server}/replay-runs/")  # unauthenticated browser: sent to Airflow's login page
    assert "/auth/login" in browser.current_url or "login" in browser.current_url.lower(), browser.current_url
    browser.add_cookie({"name": "_token", "value": _token(api_server), "path": "/"})
    browser.set_script_timeout(120)

    # The runs page: a row per run with its state, numbers and reports.
    browser.get(f"{api_server}/replay-runs/")
    heads = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "table#runs thead th")]
    assert heads[:4] == ["run", "state", "start", "duration"], heads
    rows = browser.find_elements(By.CSS_SELECTOR, "table#runs tbody tr")
    assert len(rows) == 1, browser.page_source[:3000]
    cells = [c.text for c in rows[0].find_elements(By.TAG_NAME, "td")]
    assert cells[0] == "CLI" and cells[5] == "demo" and cells[10] == "pass", cells
    rows_read = int(cells[6].replace(",", ""))
    assert rows_read == 200 and int(cells[7].replace(",", "")) > 0, cells
    assert _broken_links(browser) == []
    runs_png = _shot(browser, "replay-runs.png")

    # The why-report: the same totals as the runs row, a plot that loaded, every link answers, a way back.
    rows[0].find_element(By.LINK_TEXT, "why-report").click()
    _wait_images(browser)
    img = browser.find_element(By.CSS_SELECTOR, "img#timelines-png")
    assert browser.execute_script("return arguments[0].naturalWidth", img) > 0
    total = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "table#partitions tr.total td")]
    assert total[0] == "total" and int(total[1].replace(",", "")) == rows_read, total
    assert browser.find_element(By.ID, "glance").text.startswith(f"{rows_read} rows read")
    assert _broken_links(browser) == []
    why_png = _shot(browser, "why-report.png")
    browser.find_element(By.ID, "runs-link").click()
    assert browser.find_elements(By.CSS_SELECTOR, "table#runs"), browser.current_url

    # The Data Docs, offline: styled by the assets served with them, listing the validations.
    browser.find_element(By.LINK_TEXT, "Data Docs").click()
    _wait_images(browser)
    assert browser.execute_script("return getComputedStyle(document.querySelector('nav.navbar')).display") == "flex", \
        "Data Docs unstyled: bootstrap did not load offline"
    # The index's tables are drawn by jQuery + bootstrap-table (vendored): a validation is a clickable row.
    validations = _validation_rows(browser)
    assert len({href for href, _ in validations}) == 4, browser.page_source[:3000]
    texts = [text for _, text in validations]  # each names its data asset: dataset, folder, partitions
    assert any("windows/ of " in t and "one run (not partitioned)" in t for t in texts), texts
    assert _broken_links(browser) == []
    docs_png = _shot(browser, "data-docs.png")
    browser.execute_script(f"document.querySelector(\"{VALIDATION_ROW}\").cells[0].click()")
    for _ in range(30):
        if "/validations/" in browser.current_url:
            break
        time.sleep(1)
    assert "/validations/" in browser.current_url, browser.current_url
    _wait_images(browser)
    header = browser.find_element(By.CSS_SELECTOR, ".alert-secondary").text
    assert "Data asset: " in header and " of " in header and "None" not in header, header
    assert _broken_links(browser) == []
    result_png = _shot(browser, "data-docs-result.png")
    print(f"screenshots: {runs_png} {why_png} {docs_png} {result_png}")
