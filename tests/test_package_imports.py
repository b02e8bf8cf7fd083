"""No two packages of event_replay import each other, directly or round a longer circle; each imports only packages
below it in docs/architecture.md's picture (LAYERS); no import hides in a function.

Reads every module's imports with ``ast`` (module level and inside functions, relative and
absolute) and maps each to its top-level subpackage of ``event_replay``; a module directly in
``event_replay/`` is a node of its own. A cycle in that graph fails the test, naming it; so does an
import of a package on the same line of LAYERS or a higher one.

An import inside a function is allowed only with a one-line reason on its line, ``# lazy: <why>``
(a heavy dependency kept out of ``replay --help``) or ``# optional: <why>`` (an optional extra).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "src" / "event_replay"


def _module_name(path: Path, root: Path) -> tuple[str, ...]:
    """Dotted parts of ``path`` below ``root``'s parent: ``('event_replay', 'io', 'fs')``."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imported_modules(tree: ast.AST, module: tuple[str, ...], is_package: bool) -> set[tuple[str, ...]]:
    """Every module ``tree`` imports, anywhere in it, as dotted parts (relative ones resolved)."""
    found: set[tuple[str, ...]] = set()
    here = module if is_package else module[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(tuple(alias.name.split(".")) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - (node.level - 1)] if node.level else ()
            target = base + tuple(node.module.split(".")) if node.module else base
            found.add(target)
            # ``from . import io`` imports a module, not a name: count each alias too.
            found.update(target + (alias.name,) for alias in node.names)
    return found


def _node(parts: tuple[str, ...], root: Path) -> str | None:
    """The package-graph node of a dotted module inside event_replay, or None if outside it."""
    if len(parts) < 2 or parts[0] != root.name:
        return None
    top = parts[1]
    if (root / top).is_dir() or (root / f"{top}.py").is_file():
        return top
    return None  # ``from event_replay import some_name`` that is not a module


def package_graph(root: Path) -> dict[str, set[str]]:
    """Edges between event_replay's top-level subpackages (and top-level modules)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        source = _node(module, root) if len(module) > 1 else None
        if source is None:
            continue  # event_replay/__init__.py itself
        edges = graph.setdefault(source, set())
        tree = ast.parse(path.read_text(), filename=str(path))
        for target in _imported_modules(tree, module, path.name == "__init__.py"):
            node = _node(target, root)
            if node is not None and node != source:
                edges.add(node)
    return graph


ALLOWED_IN_FUNCTION = ("# lazy:", "# optional:")


def imports_in_functions(root: Path) -> list[str]:
    """``path:line: statement`` of every import inside a function of the modules under ``root`` that does not say
    on its line why it is there (ALLOWED_IN_FUNCTION)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        lines = source.splitlines()
        functions = [n for n in ast.walk(ast.parse(source, filename=str(path)))
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        inner = {node for f in functions for node in ast.walk(f) if isinstance(node, (ast.Import, ast.ImportFrom))}
        for node in sorted(inner, key=lambda n: n.lineno):
            line = lines[node.lineno - 1]
            if not any(mark in line for mark in ALLOWED_IN_FUNCTION):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {line.strip()}")
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes ending where it starts, or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


# docs/architecture.md's picture of the packages, lowest first: a package imports only packages of a lower line.
LAYERS = (
    ("semantics", "layout", "html_page", "extension", "fatal", "local_folder", "traces"),
    ("console", "samples"),
    ("class_archive",),
    ("driver_jvm",),
    ("spark", "spark_jobs", "exits", "from_flink"),
    ("io",),
    ("engine",),
    ("history",),
    ("pipeline",),
    ("job",),
    ("range_replay", "dry_run"),
    ("quality", "attribution"),
    ("compare",),
    ("tuning",),
    ("why",),
    ("orchestration", "quality_job"),
    ("commands",),
    ("cli", "tune_job"),
)


def imports_not_below(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """``a -> b`` for every import of ``graph`` from a package to one on its own line of ``layers`` or a higher one,
    and ``a: no line`` for a package ``layers`` does not place."""
    line = {name: i for i, names in enumerate(layers) for name in names}
    unplaced = [f"{a}: no line" for a in sorted(set(graph) | {b for bs in graph.values() for b in bs})
                if a not in line]
    return unplaced + [f"{a} -> {b}" for a in sorted(graph) for b in sorted(graph[a])
                       if a in line and b in line and line[b] >= line[a]]


def test_every_package_imports_only_packages_below_it():
    found = imports_not_below(package_graph(PACKAGE_ROOT), LAYERS)
    assert not found, "imports of a package not below the importer (docs/architecture.md):\n" + "\n".join(found)


def test_an_import_sideways_or_up_is_found():
    graph = {"low": set(), "mid": {"low", "side"}, "side": set(), "top": {"mid", "new"}}
    assert imports_not_below(graph, (("low",), ("mid", "side"), ("top",))) == ["new: no line", "mid -> side"]


def test_no_package_imports_another_in_a_circle():
    cycle = find_cycle(package_graph(PACKAGE_ROOT))
    assert cycle is None, "packages import each other in a circle: " + " -> ".join(cycle)


def test_no_import_inside_a_function_without_its_reason():
    found = imports_in_functions(PACKAGE_ROOT)
    assert not found, "imports inside functions (move them to the top, or say why: '# lazy: ...'):\n" + "\n".join(found)


def test_an_import_in_a_function_is_found_unless_it_says_why(tmp_path):
    root = tmp_path / "event_replay"
    root.mkdir()
    (root / "mod.py").write_text(
        "import json\n"
        "def f():\n"
        "    import os\n"
        "    from json import (dumps,\n"
        "                      loads)  # lazy: on the second line, not the statement's\n"
        "    import pandas  # lazy: heavy, kept out of --help\n"
        "class C:\n"
        "    async def g(self):\n"
        "        def h():\n"
        "            import matplotlib  # optional: an extra\n"
        "            import yaml\n")
    assert imports_in_functions(root) == ["event_replay/mod.py:3: import os",
                                          "event_replay/mod.py:4: from json import (dumps,",
                                          "event_replay/mod.py:11: import yaml"]


def test_the_graph_sees_every_kind_of_import(tmp_path):
    root = tmp_path / "event_replay"
    (root / "alpha").mkdir(parents=True)
    (root / "beta").mkdir()
    (root / "__init__.py").write_text("")
    (root / "alpha" / "__init__.py").write_text("from ..beta import thing\n")
    (root / "beta" / "__init__.py").write_text("thing = 1\n")
    (root / "beta" / "inner.py").write_text("def f():\n    import event_replay.gamma\n")
    (root / "gamma.py").write_text("def g():\n    from .alpha import sub\n")
    (root / "alpha" / "sub.py").write_text("from event_replay import delta\n")
    (root / "delta.py").write_text("from event_replay import __version__\n")
    graph = package_graph(root)
    assert graph == {
        "alpha": {"beta", "delta"},
        "beta": {"gamma"},
        "gamma": {"alpha"},
        "delta": set(),
    }
    assert find_cycle(graph) == ["alpha", "beta", "gamma", "alpha"]


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
        ({"a": {"b"}, "b": {"a"}}, ["a", "b", "a"]),
    ],
)
def test_find_cycle(graph, expected):
    assert find_cycle(graph) == expected
