"""The run record: what a backfill run replayed, with which code and config, on which input, and `replay verify`.

Each Airflow run folder (`<output>/_airflow/<run_id>/`) keeps `run.json`, written by the replay task before its first
Spark job and completed after each one:

    {"format": 1, "dag_id": ..., "run_id": ..., "written": "2026-11-25T19:00:00+00:00",
     "project": {"version": "0.1.0", "commit": "46a2f0e...", "dirty": false},
     "config": {"file": "jobs/configs/demo_partitioned.yaml", "effective": ".../job.yaml", "resolved": {...},
                "fingerprint": "3b1f..."},
     "request": {"output": "/data/out", "start": ..., "end": ..., "partitions": [...], "runs": [{"partition": ...,
                 "first": ..., "previous": ..., "end_of_input": ..., "missing": ...}], ...},
     "input": {"source": "/data/log", "listed": true, "digest": "9f2c...", "partitions": {"2024-01-01":
               {"folder": "dt=2024-01-01", "files": [{"path": "part-0.parquet", "size": 1234, "mtime_ns": ...}]}}},
     "spark": {"version": "4.1.3", "master": "local[*]", "deploy_mode": "client"},
     "jobs": [{"job": 1, "partitions": ["2024-01-01", ...], "seconds": 41.2, "rows_read": 15000}],
     "waiting": null, "waited": [{"for": "manual__2026-11-25T18:58", "dag_id": ..., "seconds": 312.4}]}

The config fingerprint is a hash of the whole effective config; with the input listing and each partition's place
in the plan (`request.runs`) it tells an identical run (committed.py: a run whose every partition such a run
committed is not replayed again; then `skipped` says by which runs). `waiting` is set while the run waits for
another run's turn at the output, or for a live Spark driver holding the job's lock (turn.py: which run, None for
a driver; its DAG, the holder's process, since when, the lock file), and null once it goes on; `waited` lists the
runs it waited for its turn.

The input fingerprint is the listing of the planned partitions' folders (every data file, as Spark's reader sees
them: names starting with `_` or `.` are skipped; size and modification time), so `verify` can tell whether a rerun
would read the same input without reading a row. Only a local source can be listed here (a remote one is recorded
as not listed). The commit is the project's git HEAD when it runs from a checkout, else the one pip recorded when it
was installed from git.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import importlib.metadata as md
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import pyspark
import yaml

from ..history.partitions import Partition
from ..io.files import list_files
from ..io.fs import is_local, local_path
from ..layout import AIRFLOW_FOLDER, RECORD_FILE, run_folder_name
from ..semantics.config import load_config
from .committed import config_fingerprint

FORMAT = 1
PROJECT_DIR = Path(__file__).resolve().parents[3]  # src/event_replay/orchestration/record.py -> the checkout


def project_version(project_dir: Path = PROJECT_DIR) -> dict[str, Any]:
    """The package version, and the commit: git HEAD of a checkout (dirty when tracked files changed), else the
    commit pip recorded for an install from git (direct_url.json), else None."""
    try:
        dist = md.distribution("event-replay")
        version, direct = dist.version, dist.read_text("direct_url.json")
    except md.PackageNotFoundError:
        version, direct = None, None
    out: dict[str, Any] = {"version": version, "commit": None, "dirty": None}
    if (project_dir / ".git").exists():
        try:
            head = subprocess.run(["git", "-C", str(project_dir), "rev-parse", "HEAD"], capture_output=True,
                                  text=True, timeout=10)
            status = subprocess.run(["git", "-C", str(project_dir), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=10)
            if head.returncode == 0:
                out.update(commit=head.stdout.strip(), dirty=bool(status.stdout.strip()))
        except (OSError, subprocess.SubprocessError):
            pass
    if out["commit"] is None and direct:
        try:
            out["commit"] = json.loads(direct).get("vcs_info", {}).get("commit_id")
        except ValueError:
            pass
    return out


def input_fingerprint(source_path: str, partitions: Sequence[str]) -> dict[str, Any]:
    """The data files of each partition's folder under the source (none: the folder is missing), and a digest of
    the whole listing."""
    if not is_local(source_path):
        return {"source": source_path, "listed": False, "why": "a remote source is not listed by the run record"}
    root = Path(local_path(source_path))
    parts: dict[str, Any] = {}
    for pid in partitions:
        sub = Partition.parse(pid).subpath
        folder = root / sub
        parts[pid] = {"folder": sub, "files": list_files(folder) if folder.is_dir() else None}
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return {"source": source_path, "listed": True, "digest": digest, "partitions": parts}


def spark_version() -> str | None:
    try:

        return pyspark.__version__
    except ImportError:
        return None


def write_record(run_dir: str | Path, record: Mapping[str, Any]) -> Path:
    """`<run folder>/run.json`, replaced whole."""
    folder = Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RECORD_FILE
    tmp = path.with_name(f".{RECORD_FILE}.tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True, default=str) + "\n")
    tmp.replace(path)
    return path


def read_record(run_dir: str | Path) -> dict[str, Any] | None:
    try:
        value = json.loads((Path(run_dir) / RECORD_FILE).read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def new_record(p: Mapping[str, Any], dag_id: str | None, run_id: str | None) -> dict[str, Any]:
    """The record of a planned run (`p`: what the plan task returned): written before its first Spark job."""
    effective = p.get("config_path")
    try:
        resolved = yaml.safe_load(Path(effective).read_text()) if effective else None
    except OSError:
        resolved = None
    partitions = [r["partition"] for r in p["plan"]["runs"]]
    return {"format": FORMAT, "dag_id": dag_id, "run_id": run_id,
            "written": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "project": project_version(),
            "config": {"file": p.get("config_file"), "effective": effective, "resolved": resolved,
                       "fingerprint": config_fingerprint(p.get("config_raw"))},
            "request": {"output": p.get("output_path"), "start": p.get("start"), "end": p.get("end"),
                        "partitions": partitions, "runs": list(p["plan"]["runs"]),
                        "missing": list(p["plan"].get("missing") or []),
                        "partitions_per_job": p.get("partitions_per_job"), "end_of_input": p.get("end_of_input"),
                        "continue_from_state": p.get("continue_from_state")},
            "input": (input_fingerprint(p["source_path"], partitions) if p.get("source_path") else
                      {"source": None, "listed": False, "why": "the plan names no source"}),
            "spark": {"version": spark_version(), "master": None, "deploy_mode": None},
            "jobs": []}


@dataclass
class Verification:
    """What `replay verify` found: the same input, or what differs, per partition."""
    run_id: str | None
    source: str
    partitions: int = 0
    files: int = 0
    bytes: int = 0
    differences: list[str] = field(default_factory=list)
    unchecked: str | None = None  # why the input could not be checked (a remote source)
    notes: list[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not self.differences and self.unchecked is None


def _by_path(files: list[dict] | None) -> dict[str, dict]:
    return {f["path"]: f for f in files or []}


def _when(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns / 1e9, dt.timezone.utc).isoformat(timespec="seconds")


def verify(record: Mapping[str, Any]) -> Verification:
    """The recorded input against the source as it is now (module doc)."""
    recorded = record.get("input") or {}
    v = Verification(run_id=record.get("run_id"), source=str(recorded.get("source")))
    if not recorded.get("listed"):
        v.unchecked = recorded.get("why") or "the record has no listing of the input"
        return v
    now = input_fingerprint(recorded["source"], list(recorded.get("partitions") or {}))
    if not now.get("listed"):
        v.unchecked = now.get("why")
        return v
    for pid, was in recorded["partitions"].items():
        is_ = now["partitions"][pid]
        v.partitions += 1
        folder = was.get("folder") or pid
        if was["files"] is None and is_["files"] is None:
            continue
        if was["files"] is None:
            v.differences.append(f"{folder}: the folder exists now ({len(is_['files'])} files); the run found none "
                                 "and replayed the partition as empty")
            continue
        if is_["files"] is None:
            v.differences.append(f"{folder}: the folder is gone ({len(was['files'])} files were read)")
            continue
        before, after = _by_path(was["files"]), _by_path(is_["files"])
        v.files += len(before)
        v.bytes += sum(f["size"] for f in before.values())
        for path in sorted(set(before) | set(after)):
            a, b = before.get(path), after.get(path)
            if b is None:
                v.differences.append(f"{folder}/{path}: removed")
            elif a is None:
                v.differences.append(f"{folder}/{path}: added ({b['size']:,} bytes)")
            elif a["size"] != b["size"] or a["mtime_ns"] != b["mtime_ns"]:
                v.differences.append(f"{folder}/{path}: changed ({a['size']:,} -> {b['size']:,} bytes, modified "
                                     f"{_when(a['mtime_ns'])} -> {_when(b['mtime_ns'])})")
    project, current = record.get("project") or {}, project_version()
    if project.get("commit") and current.get("commit") and project["commit"] != current["commit"]:
        v.notes.append(f"the code is at {current['commit'][:12]} now; the run ran {project['commit'][:12]}")
    elif project.get("version") and current.get("version") and project["version"] != current["version"]:
        v.notes.append(f"the package is {current['version']} now; the run ran {project['version']}")
    return v


def find_run(target: str, output_path: str | None = None) -> Path | None:
    """A run folder from `replay verify`'s argument: the folder, its run.json, or a run id under
    `<output_path>/_airflow/` (the folder name is the run id made safe: layout.run_folder_name)."""
    p = Path(target)
    if p.is_file() and p.name == RECORD_FILE:
        return p.parent
    if (p / RECORD_FILE).is_file():
        return p
    if output_path:
        folder = Path(output_path) / AIRFLOW_FOLDER / run_folder_name(target)
        if (folder / RECORD_FILE).is_file():
            return folder
    return None


def verify_line(v: Verification) -> str:
    """The verdict in one line (the differences follow it, one a line)."""
    who = f"run {v.run_id}" if v.run_id else "the run"
    if v.unchecked:
        return f"replay verify: {who}: cannot check the input: {v.unchecked}"
    size = f"{v.partitions} partitions, {v.files} files, {v.bytes:,} bytes"
    if v.same:
        return f"replay verify: {who}: {v.source} holds the same input ({size}): a rerun reads the same input"
    return (f"replay verify: {who}: {v.source} differs from the recorded input ({len(v.differences)} "
            f"difference{'s' if len(v.differences) != 1 else ''} in {size}): a rerun would read other input")


def main_verify(target: str, config: str | None = None) -> int:
    """`replay verify RUN [--config FILE]`: exit 0 the same input, 1 it differs or cannot be checked, 2 no record."""
    output = None
    if config:

        output = load_config(config).output.path
    folder = find_run(target, output)
    if folder is None:
        print(f"replay verify: no run record ({RECORD_FILE}) at {target}"
              + ("" if config else " (a run id needs --config, whose output holds its folder)"), file=sys.stderr)
        return 2
    record = read_record(folder)
    if record is None:
        print(f"replay verify: {folder / RECORD_FILE} is unreadable", file=sys.stderr)
        return 2
    v = verify(record)
    print(verify_line(v))
    for d in v.differences:
        print(f"  {d}")
    for n in v.notes:
        print(f"  note: {n}")
    return 0 if v.same else 1
