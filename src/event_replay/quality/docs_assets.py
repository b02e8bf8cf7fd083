"""GX Data Docs that render offline: the CSS/JS its pages load from CDNs, served from the docs folder instead.

Air-gapped clusters are common, and GX's pages fetch bootstrap, jQuery, bootstrap-table, Font Awesome, vega and
its logo from the internet. The build step (`make data-docs-assets`, i.e. `python -m event_replay.quality.docs_assets`)
takes the same libraries at the same versions from npm (`npm pack`, the only registry it needs) into
build/data_docs_static/; `localize` copies them into a Data Docs site (`static/vendor/`) and points every page at
them with relative links. Without the build step the pages keep their CDN links (a warning says so).

bootstrap-table's filter-control CSS is referenced at 1.19.0 by some GX templates and 1.19.1 by others: 1.19.1's
serves both (the extension's CSS did not change). vega@5, vega-lite@5 and vega-embed@6 are GX's floating majors:
the latest of each major at build time.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from PIL import Image

log = logging.getLogger(__name__)

PROJECT_DIR = Path(__file__).resolve().parents[3]
DEFAULT_ASSETS = PROJECT_DIR / "build" / "data_docs_static"
ASSETS_ENV = "REPLAY_DATA_DOCS_ASSETS"
VENDOR = "static/vendor"

# npm package -> the files GX's pages load (paths inside the package, kept under vendor/<package>/)
PACKAGES = {
    "bootstrap@4.3.1": ["dist/css/bootstrap.min.css", "dist/js/bootstrap.min.js"],
    "jquery@3.7.1": ["dist/jquery.min.js"],
    "popper.js@1.12.9": ["dist/umd/popper.min.js"],
    "bootstrap-table@1.19.1": ["dist/bootstrap-table.min.css", "dist/bootstrap-table.min.js",
                               "dist/extensions/filter-control/bootstrap-table-filter-control.css",
                               "dist/extensions/filter-control/bootstrap-table-filter-control.min.css",
                               "dist/extensions/filter-control/bootstrap-table-filter-control.min.js"],
    "bootstrap-datepicker@1.9.0": ["dist/css/bootstrap-datepicker.min.css", "dist/js/bootstrap-datepicker.min.js"],
    "@forevolve/bootstrap-dark@1.1.0": ["dist/css/bootstrap-prefers-dark.css"],
    "@fortawesome/fontawesome-free@6.6.0": ["css/all.min.css", "webfonts/"],  # the CSS loads ../webfonts/
    "vega@5": ["build/vega.min.js"],
    "vega-lite@5": ["build/vega-lite.min.js"],
    "vega-embed@6": ["build/vega-embed.min.js"],
}

# CDN URL (regex) -> the vendored file, relative to static/vendor/
URLS = [
    (r"https://maxcdn\.bootstrapcdn\.com/bootstrap/4\.3\.1/css/bootstrap\.min\.css", "bootstrap/dist/css/bootstrap.min.css"),
    (r"https://stackpath\.bootstrapcdn\.com/bootstrap/4\.3\.1/js/bootstrap\.min\.js", "bootstrap/dist/js/bootstrap.min.js"),
    (r"https://code\.jquery\.com/jquery-3\.7\.1\.min\.js", "jquery/dist/jquery.min.js"),
    (r"https://cdnjs\.cloudflare\.com/ajax/libs/popper\.js/1\.12\.9/umd/popper\.min\.js", "popper.js/dist/umd/popper.min.js"),
    (r"https://unpkg\.com/bootstrap-table@1\.19\.[01]/dist/([\w./-]+)", r"bootstrap-table/dist/\1"),
    (r"https://cdnjs\.cloudflare\.com/ajax/libs/bootstrap-datepicker/1\.9\.0/(css|js)/([\w.-]+)",
     r"bootstrap-datepicker/dist/\1/\2"),
    (r"https://cdn\.jsdelivr\.net/npm/@forevolve/bootstrap-dark@1\.1\.0/dist/css/bootstrap-prefers-dark\.css",
     "@forevolve/bootstrap-dark/dist/css/bootstrap-prefers-dark.css"),
    (r"https://cdnjs\.cloudflare\.com/ajax/libs/font-awesome/6\.6\.0/css/all\.min\.css",
     "@fortawesome/fontawesome-free/css/all.min.css"),
    (r"https://cdn\.jsdelivr\.net/npm/vega@5", "vega/build/vega.min.js"),
    (r"https://cdn\.jsdelivr\.net/npm/vega-lite@5", "vega-lite/build/vega-lite.min.js"),
    (r"https://cdn\.jsdelivr\.net/npm/vega-embed@6", "vega-embed/build/vega-embed.min.js"),
]
LOGO = re.compile(r"https://great-expectations-web-assets\.s3\.us-east-2\.amazonaws\.com/logo-long\.png[^\"']*")
# The dark theme's logo, a background image in GX's default stylesheet (static/styles/, and inlined into every page):
# made from GX's own logo-long.png (its text lightened; the portrait keeps its white disc) into static/images/.
DARK_LOGO = re.compile(r"https://great-expectations-web-assets\.s3\.us-east-2\.amazonaws\.com/full_logo_dark\.png")
DARK_LOGO_FILE = "logo-long-dark.png"


def _name(spec: str) -> str:
    return spec.rsplit("@", 1)[0]


def build(dest: Path = DEFAULT_ASSETS, npm: str = "npm") -> Path:
    """`npm pack` every package and keep the files GX loads under dest/<package>/ (replaced)."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([npm, "pack", "--silent", *PACKAGES], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        staged = Path(tmp, "out")
        for spec, wanted in PACKAGES.items():
            name = _name(spec)
            tgz = next(Path(tmp).glob(name.lstrip("@").replace("/", "-") + "-*.tgz"))
            with tarfile.open(tgz) as tar:
                members = [m for m in tar.getmembers() if m.isfile() and any(
                    m.name == f"package/{w}" or (w.endswith("/") and m.name.startswith(f"package/{w}"))
                    for w in wanted)]
                for m in members:
                    target = staged / name / m.name.removeprefix("package/")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(tar.extractfile(m).read())
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staged, dest)
    return dest


def assets_dir() -> Path:
    return Path(os.environ.get(ASSETS_ENV) or DEFAULT_ASSETS)


def rewrite(page: str, to_vendor: str) -> str:
    """A page's CDN links as links to the vendored copies; `to_vendor` is the page's relative path to vendor/."""
    for pattern, local in URLS:
        page = re.sub(pattern, lambda m, local=local: to_vendor + m.expand(local), page)
    static = to_vendor.removesuffix("vendor/")
    page = DARK_LOGO.sub(static + "images/" + DARK_LOGO_FILE, page)  # GX inlines its stylesheet into every page
    return LOGO.sub(static + "images/logo-long.png", page)


def localize(docs_dir: str | Path, assets: Path | None = None) -> bool:
    """Copy the vendored assets into the site and rewrite its pages; False (pages untouched) without assets."""
    docs, assets = Path(docs_dir), assets or assets_dir()
    if not assets.is_dir():
        log.warning("Data Docs keep their CDN links (offline they render unstyled): no assets in %s; "
                    "run `make data-docs-assets`", assets)
        return False
    shutil.copytree(assets, docs / VENDOR, dirs_exist_ok=True)
    for page in docs.rglob("*.html"):
        depth = len(page.relative_to(docs).parts) - 1
        page.write_text(rewrite(page.read_text(), "../" * depth + VENDOR + "/"))
    styles = [f for f in (docs / "static" / "styles").glob("*.css")] if (docs / "static" / "styles").is_dir() else []
    for css in styles:  # static/styles/x.css -> ../images/
        text = css.read_text()
        if DARK_LOGO.search(text):
            css.write_text(DARK_LOGO.sub("../images/" + DARK_LOGO_FILE, text))
    dark_logo(docs / "static" / "images")
    return True


def dark_logo(images: Path) -> Path | None:
    """GX's logo for a dark page: `logo-long.png` with its dark text made light (the portrait on its left, a white
    disc, stays as it is). None when the site has no logo to start from."""
    source = images / "logo-long.png"
    if not source.is_file():
        return None

    with Image.open(source) as im:
        logo = im.convert("RGBA")
    px = logo.load()
    disc = logo.height + 2  # the portrait is a disc as wide as the logo is high; the text starts after it
    for y in range(logo.height):
        for x in range(disc, logo.width):
            r, g, b, a = px[x, y]
            if a:
                px[x, y] = (255 - r, 255 - g, 255 - b, a)  # black text -> white, anti-aliasing kept
    target = images / DARK_LOGO_FILE
    logo.save(target)
    return target


if __name__ == "__main__":  # the build step: python -m event_replay.quality.docs_assets [DEST]
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_ASSETS))
