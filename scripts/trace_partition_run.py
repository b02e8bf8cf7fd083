"""Trace `replay run --config F --partition D` (the second day of a sample history, continuing the first's state)
through the modules of event_replay, the check behind docs/architecture.md's "What a `--partition` run passes
through". A developer's step: nothing in a run or a DAG calls it.

    PYTHONPATH=src .venv/bin/python scripts/trace_partition_run.py [--work DIR] [--dag-plan]

With --dag-plan it traces instead what a DAG run does before its Spark job: the validate and plan tasks' functions
(orchestration/tasks.py) for the same second day, continuing the history (continue_from_state).

Prints, from `sys.setprofile` call events in src/event_replay/ during the traced run:
  - the modules in the order the run first enters them;
  - the calls back up: a call from one package (a top-level subpackage or module, as
    tests/test_package_imports.py counts them) into one it does not import, even indirectly (a callback);
  - the stops that follow `cfg` (functions given a JobConfig) as the package hops they make (caller's package >
    callee's), in the order first made: a hop up is a return;
  - the functions given a JobConfig that run more than once (outside engine/, which runs per chunk and window);
  - in all: the modules and the hops (the counts docs/architecture.md and issue 49 compare).
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml

from event_replay.cli import main as replay
from event_replay.semantics.config import JobConfig

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "event_replay"


def _import_graph() -> dict[str, set[str]]:
    """Which packages each package reaches through its imports (tests/test_package_imports.py's graph, closed)."""
    spec = importlib.util.spec_from_file_location("package_imports", ROOT / "tests" / "test_package_imports.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    graph = module.package_graph(PACKAGE)
    reach = {}
    for start in graph:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        reach[start] = seen
    return reach


def _module(frame) -> str | None:
    """`io/source.py` for a frame of src/event_replay/io/source.py; None outside the package."""
    path = Path(frame.f_code.co_filename)
    try:
        return path.relative_to(PACKAGE).as_posix()
    except ValueError:
        return None


def _package(module: str) -> str:
    return module.split("/")[0].removesuffix(".py")


class Trace:
    def __init__(self):
        self.first: list[str] = []
        self.calls: list[tuple[str, str, str]] = []  # (caller module, callee module, callee function)
        self.cfg_stops: list[tuple[str, str, str | None]] = []  # (module, function, caller module) given a JobConfig
        self._generators: set = set()  # frames of generators started: a later call event only resumes one

    def __call__(self, frame, event, arg):
        if event != "call":
            return
        module = _module(frame)
        if module is None:
            return
        if frame.f_code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE):
            if frame in self._generators:
                return
            self._generators.add(frame)
        if module not in self.first:
            self.first.append(module)
        caller = frame.f_back
        while caller is not None and _module(caller) is None:
            caller = caller.f_back
        name = frame.f_code.co_qualname
        caller_module = _module(caller) if caller is not None else None
        if caller_module is not None:
            self.calls.append((caller_module, module, name))
        code = frame.f_code
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        if any(isinstance(frame.f_locals.get(p), JobConfig) for p in params):
            self.cfg_stops.append((module, name, caller_module))


def _sample(work: Path) -> tuple[Path, list[str]]:
    """A two-day partitioned sample log and demo_partitioned.yaml pointed at it; the config and the day ids."""
    source, out = work / "log", work / "out"
    replay(["sample", "--out", str(source), "--rows", "30000", "--rate", "0.2", "--splits", "4",
            "--partitioned", "day"])
    days = sorted(p.name.removeprefix("dt=") for p in source.iterdir() if p.name.startswith("dt="))
    raw = yaml.safe_load((ROOT / "jobs" / "configs" / "demo_partitioned.yaml").read_text())
    raw["source"]["path"], raw["output"]["path"] = str(source), str(out)
    cfg = work / "config.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    return cfg, days


def _report(trace: Trace, reach: dict[str, set[str]]) -> None:
    print("modules, in the order first entered:")
    for i, module in enumerate(trace.first, 1):
        print(f"  {i:2}. {module}")
    up = sorted({(a, b, f) for a, b, f in trace.calls
                 if _package(a) != _package(b) and _package(b) not in reach.get(_package(a), set())})
    print(f"calls back up (into a package the caller does not import): {len(up)}")
    for a, b, f in up:
        print(f"  {a} -> {b} {f}")
    hops: list[tuple[str, str]] = []
    for module, _, caller in trace.cfg_stops:
        hop = (_package(caller) if caller else "-", _package(module))
        if hop[0] != hop[1] and hop not in hops:
            hops.append(hop)
    print(f"cfg's hops between packages ({len(trace.cfg_stops)} stops), in the order first made:")
    for a, b in hops:
        print(f"  {a} > {b}{'' if a == '-' or b in reach.get(a, set()) else '   <- up: a return'}")
    stops = Counter((module, name) for module, name, _ in trace.cfg_stops)
    repeated = {stop: n for stop, n in stops.items() if n > 1 and not stop[0].startswith("engine/")}
    print(f"functions given cfg more than once (outside engine/): {len(repeated)}")
    for (module, name), n in sorted(repeated.items()):
        print(f"  {module} {name}: {n}")
    print(f"in all: {len(trace.first)} modules, {len(hops)} hops between packages")


def _dag_plan(tasks, cfg: Path, day: str, work: Path) -> int:
    """The backfill DAG's validate and plan tasks (`tasks`: orchestration/tasks.py) for `day`, continuing the
    history: what a DAG run does before its Spark job."""
    request = {"config": str(cfg), "start_date": day, "end_date": day, "continue_from_state": True,
               "end_of_input": "hold"}
    tasks.plan_partitions(tasks.validate_backfill(request, str(work), "manual__trace"))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=None, help="folder for the sample log and outputs (default: a temp one)")
    parser.add_argument("--dag-plan", action="store_true", help="trace the DAG's validate and plan tasks instead")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="trace_partition_"))
    work.mkdir(parents=True, exist_ok=True)
    cfg, days = _sample(work)
    run = ["run", "--config", str(cfg), "--master", "local[2]"]
    if replay([*run, "--partition", days[0], "--first"]) != 0:
        return 1
    reach = _import_graph()
    if args.dag_plan:
        from event_replay.orchestration import tasks  # lazy: Airflow, only for --dag-plan; imported before the trace
        traced = lambda: _dag_plan(tasks, cfg, days[1], work)  # noqa: E731
    else:
        traced = lambda: replay([*run, "--partition", days[1]])  # noqa: E731
    trace = Trace()
    sys.setprofile(trace)
    try:
        code = traced()
    finally:
        sys.setprofile(None)
    if code != 0:
        return code
    _report(trace, reach)
    return 0


if __name__ == "__main__":
    sys.exit(main())
