"""Tests mirror the source tree: each module `src/event_replay/<pkg>/<mod>.py` has its own test file in the mirrored
folder, `tests/<pkg>/test_<mod>.py`, or `tests/<pkg>/test_<pkg>_<mod>.py` where the plain name would clash with
another folder's (pytest cannot collect two test files of one basename: tests/ has no __init__.py); `__main__.py`
is `test_<pkg>_main.py`. So a new module without a test fails `make test`."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "event_replay"
TESTS = ROOT / "tests"


def mirrored_names(module: Path) -> list[Path]:
    """The test files that count as `module`'s own (relative to tests/)."""
    rel = module.relative_to(SRC)
    folder = rel.parent
    mod = "main" if rel.stem == "__main__" else rel.stem
    names = [] if rel.stem == "__main__" else [folder / f"test_{mod}.py"]
    if folder.parts:
        names.append(folder / f"test_{folder.name}_{mod}.py")
    return names


def modules() -> list[str]:
    return sorted(p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")
                  if p.name != "__init__.py" and "__pycache__" not in p.parts)


def without_test() -> set[str]:
    return {m for m in modules() if not any((TESTS / n).is_file() for n in mirrored_names(SRC / m))}


def test_every_module_has_its_mirrored_test_file():
    missing = without_test()
    assert not missing, (f"modules without a test file of their own ({', '.join(sorted(missing))}): add "
                         "tests/<pkg>/test_<mod>.py (or test_<pkg>_<mod>.py on a name clash)")


def test_no_two_test_files_share_a_basename():
    # pytest (rootdir import mode, no __init__.py) refuses to collect the second one.
    seen: dict[str, Path] = {}
    for f in sorted(TESTS.rglob("test_*.py")):
        assert f.name not in seen, f"{f.relative_to(ROOT)} and {seen[f.name].relative_to(ROOT)}"
        seen[f.name] = f
