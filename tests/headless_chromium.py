"""The headless Chromium the browser tests drive (Debian's chromium and chromium-driver), offline: no CDN, no
internet, only 127.0.0.1."""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

CHROMIUM, CHROMEDRIVER = shutil.which("chromium") or "/usr/bin/chromium", shutil.which("chromedriver")


@contextmanager
def chromium(profile: Path, window: str = "1400,1800") -> Iterator:
    """A selenium driver of headless Chromium with its profile in `profile`, quit on exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert os.path.exists(CHROMIUM) and CHROMEDRIVER, "chromium/chromedriver missing (.ci/run installs them in CI)"
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
              "--no-first-run", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
              f"--window-size={window}", f"--user-data-dir={profile}",
              "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(180)
    try:
        yield driver
    finally:
        driver.quit()
