"""A dry run of a partition range: what `replay run --partitions A..B` (range_replay.py, beside it; or a backfill
run's jobs) would read and write, and how long it would take, with nothing written and no Spark started.

Per partition: its source folder (missing or not), the data files in it (as Spark's reader sees them: names starting
with `_` or `.` skipped) with their bytes, the rows (Parquet footers; a CSV file's lines but its header), and
whether the output already has it (every output dataset has its `dt=` folder: committed, a rerun replays and
commits it again) and its carried state. Then the chunks (one Spark application each) and an estimate: from the
last runs on the same output (their run records, record.py: seconds and rows of each job), else from the rates
measured in BENCHMARKS.md (a job's fixed cost, then rows per second on 2 cores).

Which state the first partition continues and where an interrupted run resumes come from history/, as the run's
own do (pipeline.PartitionSpan.resolved, progress.resume_point): a dry run names what the run will do.

Only a local source and output can be listed without Spark; a remote one is named as not listed.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pyarrow.parquet as pq

from .history.partitions import Partition, has_state
from .history.progress import resume_point
from .io.files import list_files
from .io.fs import fs_for, is_local, local_path
from .layout import AIRFLOW_FOLDER, DATASETS, RECORD_FILE
from .pipeline import PartitionSpan
from .semantics.config import JobConfig

# Measured (`git show e98f581:bench/results/SESSIONS.md`, "One span per chunk"): a 31-day chunk of 155,000 rows
# took 28.4 s of spark-submit (21.5 s of span), and a 10M-row replay 70-75 s: about 25 s a job (JVM, session, the
# engine's fixed Spark jobs) + 200,000 rows/s.
JOB_SECONDS, ROWS_PER_SECOND = 25.0, 200_000.0
NO_PREDECESSOR = "-"  # `continues` when no partition comes before the first one
NOT_LOOKED_UP = "?"  # `continues` when the source or output is not local: not listed without Spark
FILES_SHOWN = 20  # files listed per partition on the console (every one is in the JSON)


@dataclass
class PartitionInput:
    partition: str
    folder: str
    missing: bool
    files: list[dict[str, Any]] = field(default_factory=list)
    bytes: int = 0
    rows: int | None = 0  # None: not countable here (a remote source)
    committed: bool | None = False  # None: the output cannot be looked at here
    state: bool | None = False


@dataclass
class DryRun:
    first: str
    last: str
    source: str
    output: str
    partitions: list[PartitionInput]
    chunks: list[list[str]]
    resume_after: str | None  # an interrupted run of the range committed up to here (its `_range.json`)
    estimate_seconds: float | None
    estimate_basis: str
    listed: bool = True
    continues: str | None = None  # the partition whose carried state the first one continues (None: a new history)
    state_found: bool | None = None  # whether that state is there (None: not asked, or a remote output)

    @property
    def rows(self) -> int | None:
        counts = [p.rows for p in self.partitions]
        return None if any(r is None for r in counts) else sum(counts)  # type: ignore[misc]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rows": self.rows}


def _rows(path: Path, fmt: str) -> int:
    if fmt == "csv":
        data = path.read_bytes()
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        return max(0, lines - 1)  # the header

    return pq.ParquetFile(path).metadata.num_rows


def _committed(output: Path, subpath: str) -> bool:
    return all((output / ds / subpath).is_dir() and any((output / ds / subpath).iterdir()) for ds in DATASETS)


def partition_inputs(cfg: JobConfig, ids: Sequence[str]) -> tuple[list[PartitionInput], bool]:
    """Each partition's input and whether the output has it; False when the source is not local (not listed)."""
    source, fmt, output = cfg.source.path, cfg.source.format, cfg.output.path
    listed = is_local(source)
    out = Path(local_path(output)) if is_local(output) else None
    found = []
    for pid in ids:
        sub = Partition.parse(pid).subpath
        p = PartitionInput(partition=pid, folder=sub, missing=False)
        if listed:
            folder = Path(local_path(source)) / sub
            p.missing = not folder.is_dir()
            p.files = [] if p.missing else list_files(folder)
            p.bytes = sum(f["size"] for f in p.files)
            p.rows = sum(_rows(folder / f["path"], fmt) for f in p.files)
        else:
            p.rows = None
        if out is not None:
            p.committed, p.state = _committed(out, sub), has_state(None, output, pid)
        else:
            p.committed = p.state = None
        found.append(p)
    return found, listed


def earlier_jobs(output: str) -> list[dict[str, Any]]:
    """The jobs of earlier runs on this output (their run records), oldest run first."""
    if not is_local(output):
        return []
    runs = Path(local_path(output)) / AIRFLOW_FOLDER
    jobs = []
    records = sorted(runs.glob(f"*/{RECORD_FILE}"), key=lambda p: p.stat().st_mtime) if runs.is_dir() else []
    for f in records:
        try:
            record = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        jobs += [j for j in record.get("jobs") or []
                 if isinstance(j.get("seconds"), (int, float)) and isinstance(j.get("rows_read"), int)]
    return jobs


def estimate(rows: int | None, jobs: int, earlier: list[dict[str, Any]]) -> tuple[float | None, str]:
    """Seconds for `jobs` Spark jobs over `rows` rows, and what the figure rests on."""
    if rows is None:
        return None, "the rows of a remote source are not counted in a dry run"
    if earlier:
        last = earlier[-10:]  # the latest jobs: the machine and the data as they are now
        fixed = min(JOB_SECONDS, min(j["seconds"] for j in last))
        per_row = sum(max(0.0, j["seconds"] - fixed) for j in last) / max(1, sum(j["rows_read"] for j in last))
        rate = f"{1 / per_row:,.0f} rows/s" if per_row > 0 else "no measurable time per row"
        return (jobs * fixed + rows * per_row,
                f"from the last {len(last)} job{'s' if len(last) != 1 else ''} on this output: {fixed:.0f} s a job "
                f"+ {rate}")
    return (jobs * JOB_SECONDS + rows / ROWS_PER_SECOND,
            f"no earlier run on this output: the rates measured in BENCHMARKS.md, {JOB_SECONDS:.0f} s a job + "
            f"{ROWS_PER_SECOND:,.0f} rows/s on 2 cores")


def dry_run(cfg: JobConfig, ids: Sequence[str], chunk_size: int | None = None, continues: str | None = None,
            resume_after: str | None = None) -> DryRun:
    """The dry run of the partitions `ids` (consecutive, in order) of `cfg`'s source, in chunks of `chunk_size`
    (None: the whole range is one Spark application, as `replay run --partitions`); `continues`: the partition
    whose carried state the first one continues (None: it starts a history); `resume_after`: the partition after
    which an interrupted run of the same request continues (history/progress.resume_point)."""
    parts, listed = partition_inputs(cfg, ids)
    size = chunk_size or len(ids)
    chunks = [list(ids[i:i + size]) for i in range(0, len(ids), size)]
    rows = None if not listed else sum(p.rows or 0 for p in parts)
    seconds, basis = estimate(rows, len(chunks), earlier_jobs(cfg.output.path))
    found = (has_state(None, cfg.output.path, continues)
             if continues not in (None, NO_PREDECESSOR, NOT_LOOKED_UP) and is_local(cfg.output.path) else None)
    return DryRun(first=ids[0], last=ids[-1], source=cfg.source.path, output=cfg.output.path, partitions=parts,
                  chunks=chunks, resume_after=resume_after,
                  estimate_seconds=seconds, estimate_basis=basis, listed=listed, continues=continues,
                  state_found=found)


def _size(n: int) -> str:
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} TB"


def _yes(v: bool | None) -> str:
    return "?" if v is None else ("yes" if v else "no")


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else (f"{s / 60:.1f} min" if s < 7200 else f"{s / 3600:.1f} h")


def lines(d: DryRun, prog: str = "replay") -> list[str]:
    """The dry run as the console (and the Airflow task log) shows it. Every line starts with a word (`prog:`) or
    two spaces: a log reader never takes a partition's date at the start of a line for the line's time."""
    out = [f"{prog}: dry run of {d.first}..{d.last}: {len(d.partitions)} partition"
           f"{'s' if len(d.partitions) != 1 else ''} of {d.source} in {len(d.chunks)} Spark job"
           f"{'s' if len(d.chunks) != 1 else ''}; nothing is written"]
    head = ("partition", "folder", "files", "bytes", "rows", "committed", "state")
    rows = [head] + [(p.partition, "missing" if p.missing else p.folder, str(len(p.files)), _size(p.bytes),
                      "?" if p.rows is None else f"{p.rows:,}", _yes(p.committed), _yes(p.state))
                     for p in d.partitions]
    total_rows = d.rows
    rows.append(("total", "", str(sum(len(p.files) for p in d.partitions)),
                 _size(sum(p.bytes for p in d.partitions)), "?" if total_rows is None else f"{total_rows:,}", "", ""))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        out.append("  " + "  ".join(c.rjust(w) if i in (2, 3, 4) else c.ljust(w)
                                     for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    for k, chunk in enumerate(d.chunks, 1):
        out.append(f"{prog}: job {k} of {len(d.chunks)}: {chunk[0]}..{chunk[-1]} ({len(chunk)} partitions)")
    if d.listed:
        out.append(f"{prog}: input files:")
        for p in d.partitions:
            for f in p.files[:FILES_SHOWN]:
                out.append(f"  {p.folder}/{f['path']}  {f['size']:,} bytes")
            if len(p.files) > FILES_SHOWN:
                out.append(f"  {p.folder}: {len(p.files) - FILES_SHOWN} more files")
    else:
        out.append(f"{prog}: input files: not listed ({d.source} is not a local path)")
    if d.continues is None:
        out.append(f"{prog}: {d.first} starts a new history (no carried state is read)")
    elif d.continues == NO_PREDECESSOR:
        out.append(f"{prog}: {d.first} has no partition before it to continue: the run would be refused without "
                   "--first")
    elif d.continues == NOT_LOOKED_UP:
        out.append(f"{prog}: {d.first} continues the latest partition before it (not looked up: a remote source or "
                   "output is not listed without Spark)")
    else:
        found = {True: "found", False: "missing: the run would be refused", None: "not checked"}[d.state_found]
        out.append(f"{prog}: {d.first} continues the carried state of {d.continues} ({found})")
    missing = [p.partition for p in d.partitions if p.missing]
    if missing:
        out.append(f"{prog}: without a source folder: {', '.join(missing)} (refused unless --allow-missing, which "
                   "replays them as empty)")
    committed = [p.partition for p in d.partitions if p.committed]
    out.append(f"{prog}: already committed in {d.output}: "
               + (f"{', '.join(committed)} (a run replays and commits them again)" if committed else "none"))
    if d.resume_after:
        out.append(f"{prog}: an interrupted run of this range committed up to {d.resume_after}: a run continues "
                   "after it")
    if d.estimate_seconds is not None:
        out.append(f"{prog}: estimate: about {_seconds(d.estimate_seconds)} ({d.estimate_basis})")
    else:
        out.append(f"{prog}: estimate: none ({d.estimate_basis})")
    return out


def main_dry_run(cfg: JobConfig, plan: PartitionSpan) -> int:
    """`replay run --config F --partitions A..B --dry-run [--first | --previous P] [...]`: prints the dry run of the
    very plan the run would run (its predecessor and resume point named as range_replay.run_range names them);
    exit 0."""
    ids = plan.ids
    local = is_local(cfg.source.path) and is_local(cfg.output.path)
    if local:
        plan = plan.resolved(None, cfg)
    if plan.first or plan.previous or local:
        continues = plan.previous if plan.first or plan.previous else NO_PREDECESSOR
    else:
        continues = NOT_LOOKED_UP
    output = cfg.output.path.rstrip("/")
    resume = resume_point(fs_for(output), output, cfg, plan.to_dict(), ids) if is_local(output) else None
    print("\n".join(lines(dry_run(cfg, ids, continues=continues, resume_after=resume))), flush=True)
    return 0


def dry_run_line(d: DryRun | dict) -> str:
    """One line for the runs page: partitions, rows, bytes, committed, estimate."""
    x = d.to_dict() if isinstance(d, DryRun) else d
    parts = x.get("partitions") or []
    committed = sum(1 for p in parts if p.get("committed"))
    rows = x.get("rows")
    est = x.get("estimate_seconds")
    return (f"dry run: {len(parts)} partitions, {len(x.get('chunks') or [])} Spark jobs, "
            f"{'?' if rows is None else f'{rows:,}'} rows, {_size(sum(p.get('bytes') or 0 for p in parts))}"
            f"{f', {committed} already committed' if committed else ''}"
            f"{f', about {_seconds(est)}' if est is not None else ''}")

