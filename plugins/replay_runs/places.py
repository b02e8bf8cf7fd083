"""Where the page reads and serves from: the runs root, and the folders of the backfill DAGs' runs that wrote outside it.

A place is named in the page's URLs by a key: a folder under the root by its path relative to the root (POSIX); a
folder outside the root (a run whose output.path is elsewhere: the Airflow DB's validate result names it) by
`_outside/<its absolute path>`. An outside key is only honoured for a folder the DB's runs name (their output or
run folder): a URL cannot make the page read anywhere else. A root-relative key never starts with `_outside`: the
walk of the root (runs.output_folders) skips folders starting with `_`.

Files are served only inside a `_data_docs/`, `why_report/`, `_tuning/` or `compare/` folder (safe_path); outside
the root, only those folders of the named output or of its run folders (`_airflow/<run>/<folder>`); and a run
folder's report (`_airflow/<run>/report.html`, `report.md`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from event_replay.layout import AIRFLOW_FOLDER, COMPARE_FOLDER, DOCS_FOLDER, REPORT_HTML_FILE, REPORT_MD_FILE, \
    TUNING_FOLDER, WHY_FOLDER

SERVED_FOLDERS = (DOCS_FOLDER, WHY_FOLDER, TUNING_FOLDER, COMPARE_FOLDER)  # the only folders the app serves files from
SERVED_FILES = (REPORT_HTML_FILE, REPORT_MD_FILE)  # files served from a run folder itself: the run report
OUTSIDE = "_outside"


def key_of(root: Path, folder: Path) -> str:
    """The key of a folder: relative to the root when under it, else `_outside/<absolute path>`."""
    folder = folder.resolve()
    if folder.is_relative_to(root):
        return folder.relative_to(root).as_posix() if folder != root else "."
    return f"{OUTSIDE}{folder.as_posix()}"


def shown(key: str | None) -> str | None:
    """The folder as the page names it: root-relative, or its absolute path when outside the root."""
    return key[len(OUTSIDE):] if key and is_outside(key) else key


def is_outside(key: str) -> bool:
    return key.startswith(f"{OUTSIDE}/")


def _clean(relative: str) -> list[str] | None:
    """The parts of a key or relative path; None for one that could climb (`..`, absolute, backslashes, NUL)."""
    if not relative or "\x00" in relative or relative.startswith(("/", "\\")) or "\\" in relative:
        return None
    parts = relative.split("/")
    if any(p in ("..", "") for p in parts[:-1]) or parts[-1] == "..":
        return None
    return parts


def folder(root: Path, key: str, outside: Iterable[Path] = ()) -> Path | None:
    """The folder a key names: under the root, or one of the `outside` folders (or inside one); None otherwise."""
    if _clean(key) is None:
        return None
    if is_outside(key):
        target = Path(key[len(OUTSIDE):]).resolve()
        return target if any(target.is_relative_to(base) for base in _bases(outside)) else None
    try:
        target = (root / key).resolve()
    except (OSError, RuntimeError):
        return None
    return target if target.is_relative_to(root) else None


def _bases(outside: Iterable[Path]) -> list[Path]:
    return [Path(p).resolve() for p in outside]


def safe_path(root: Path, relative: str, outside: Iterable[Path] = ()) -> Path | None:
    """`relative` (a key and a path below it) when it is a file the page may serve (module doc); None for anything
    else (`..`, absolute paths, symlinks out of the root, other files of the outputs or the run records)."""
    if _clean(relative) is None:
        return None
    if is_outside(relative):
        return _outside_file(Path(relative[len(OUTSIDE):]), _bases(outside))
    try:
        target = (root / relative).resolve()
    except (OSError, RuntimeError):
        return None
    if not target.is_relative_to(root):
        return None
    parts = target.relative_to(root).parts
    served = any(p in SERVED_FOLDERS for p in parts[:-1]) or (
        len(parts) >= 3 and parts[-3] == AIRFLOW_FOLDER and parts[-1] in SERVED_FILES)
    return target if served else None


def _outside_file(path: Path, bases: list[Path]) -> Path | None:
    """A file outside the root: inside a served folder of a base, or of a base's run folder."""
    try:
        target = path.resolve()
    except (OSError, RuntimeError):
        return None
    for base in bases:
        if not target.is_relative_to(base):
            continue
        parts = target.relative_to(base).parts
        if parts[:1] == (AIRFLOW_FOLDER,):
            parts = parts[2:]  # a file of one of the output's run folders
        if (len(parts) >= 2 and parts[0] in SERVED_FOLDERS) or (len(parts) == 1 and parts[0] in SERVED_FILES):
            return target
    return None
