"""No two packages of event_replay import each other, directly or round a longer circle.

Reads every module's imports with ``ast`` (module level and inside functions, relative and
absolute) and maps each to its top-level subpackage of ``event_replay``; a module directly in
``event_replay/`` is a node of its own. A cycle in that graph fails the test, naming it.
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


def test_no_package_imports_another_in_a_circle():
    cycle = find_cycle(package_graph(PACKAGE_ROOT))
    assert cycle is None, "packages import each other in a circle: " + " -> ".join(cycle)


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
