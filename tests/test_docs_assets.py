"""Data Docs offline: every CDN link of GX's templates maps to a vendored file, and a site's pages point at the copy
served with them (relative links, right at any depth)."""
from __future__ import annotations

import re
from pathlib import Path

import great_expectations

from event_replay.quality.docs_assets import PACKAGES, URLS, _name, localize, rewrite

TEMPLATES = Path(great_expectations.__file__).parent / "render" / "view" / "templates"


def test_every_cdn_asset_of_gx_templates_is_vendored():
    links = set()
    for t in TEMPLATES.glob("*.j2"):
        links |= set(re.findall(r"(?:src|href)=\"(https://[^\"]+\.(?:css|js)|https://cdn\.jsdelivr\.net/npm/vega[^\"]*)\"",
                                t.read_text()))
    assert links, "GX templates moved: the list of CDN links is stale"
    for url in links:
        local = rewrite(f'"{url}"', "V/")
        assert local.startswith('"V/'), url
        package = next(_name(p) for p in PACKAGES if local[3:].startswith(_name(p) + "/"))
        file = local[3 + len(package) + 1:-1]
        wanted = next(w for p, w in PACKAGES.items() if _name(p) == package)
        assert any(file == w or (w.endswith("/") and file.startswith(w)) for w in wanted), url


def test_localize_copies_assets_and_rewrites_pages(tmp_path):
    assets = tmp_path / "assets"
    (assets / "bootstrap" / "dist" / "css").mkdir(parents=True)
    (assets / "bootstrap" / "dist" / "css" / "bootstrap.min.css").write_text(".navbar{display:flex}")
    docs = tmp_path / "docs"
    (docs / "validations" / "s" / "run").mkdir(parents=True)
    css = '<link href="https://maxcdn.bootstrapcdn.com/bootstrap/4.3.1/css/bootstrap.min.css" rel="stylesheet">'
    (docs / "index.html").write_text(css)
    (docs / "validations" / "s" / "run" / "r.html").write_text(css)
    assert localize(docs, assets)
    assert (docs / "static" / "vendor" / "bootstrap" / "dist" / "css" / "bootstrap.min.css").is_file()
    assert 'href="static/vendor/bootstrap/dist/css/bootstrap.min.css"' in (docs / "index.html").read_text()
    deep = (docs / "validations" / "s" / "run" / "r.html").read_text()
    assert 'href="../../../static/vendor/bootstrap/dist/css/bootstrap.min.css"' in deep
    assert not localize(tmp_path / "other", tmp_path / "absent")  # no build step: pages untouched
    assert len(URLS) >= 10
