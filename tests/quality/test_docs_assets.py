"""Data Docs offline: every CDN link of GX's templates maps to a vendored file, and a site's pages point at the copy
served with them (relative links, right at any depth)."""
from __future__ import annotations

import re
import shutil
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


def test_no_asset_left_on_a_cdn_or_s3(tmp_path):
    """A site as GX lays it out (its static/ folder: default stylesheet with the dark theme's logo on S3, images),
    with a page carrying the logo and the CDN links: after localize, every stylesheet url() and every src/href of a
    CSS, JS or image is a file of the site, and the dark theme's logo exists there (a lightened copy of GX's)."""
    static = Path(great_expectations.__file__).parent / "render" / "view" / "static"
    docs = tmp_path / "docs"
    shutil.copytree(static, docs / "static")
    assert "amazonaws.com/full_logo_dark.png" in (docs / "static" / "styles" / "data_docs_default_styles.css").read_text()
    links = "".join(f'<script src="{u}"></script>' for u in ("https://code.jquery.com/jquery-3.7.1.min.js",
                                                            "https://cdn.jsdelivr.net/npm/vega@5"))
    logo = "https://great-expectations-web-assets.s3.us-east-2.amazonaws.com/logo-long.png?d=1"
    inline = f"<style>{(docs / 'static' / 'styles' / 'data_docs_default_styles.css').read_text()}</style>"
    (docs / "index.html").write_text(f'{inline}<img src="{logo}">{links}')  # GX inlines its stylesheet
    (docs / "validations" / "s").mkdir(parents=True)
    (docs / "validations" / "s" / "r.html").write_text(inline)
    assets = tmp_path / "assets"
    (assets / "jquery" / "dist").mkdir(parents=True)
    assert localize(docs, assets)
    remote = re.compile(r"""(?:url\(\s*['"]?|(?:src|href)=["'])(https?://[^'")\s]+)""")
    for f in [*docs.rglob("*.html"), *docs.rglob("*.css")]:
        found = [u for u in remote.findall(f.read_text()) if re.search(r"\.(css|js|png|svg|jpg|gif|woff2?)\b|/npm/", u)]
        assert not found, (f, found)
    css = (docs / "static" / "styles" / "data_docs_default_styles.css").read_text()
    assert "url('../images/logo-long-dark.png')" in css
    assert "url('static/images/logo-long-dark.png')" in (docs / "index.html").read_text()
    assert "url('../../static/images/logo-long-dark.png')" in (docs / "validations" / "s" / "r.html").read_text()
    from PIL import Image

    with Image.open(docs / "static" / "images" / "logo-long-dark.png") as dark, \
            Image.open(docs / "static" / "images" / "logo-long.png") as light:
        assert dark.size == light.size
        text = (dark.width * 3 // 4, 0, dark.width, dark.height)  # the right of the logo: text only
        pixels = dark.convert("RGBA").crop(text).load()
        opaque = [pixels[x, y] for x in range(text[2] - text[0]) for y in range(text[3]) if pixels[x, y][3] > 200]
        assert opaque and max(p[0] for p in opaque) > 200  # light text
