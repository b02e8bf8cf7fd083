"""`replay run --partitions FROM..TO`: a range of day (or hour) partitions replayed in one Spark application.

Each partition continues the state of the one before (SEMANTICS §6 `hold`), so a range is a strict sequence of
partition replays. It goes through exactly the code path of one `--partition` run (job.run_partition: the
predecessor's committed state read back, the outputs and the partition's own state committed together), in one
session and under one hold of the output lock: what a range saves is the JVM start, the Spark session and the
lock/recovery round trip of every partition, and its outputs are those of the one-by-one runs by construction.

Every partition is committed on its own, so a crash leaves whole partitions. A small progress file
`<output.path>/_range.json` names the request and the last partition committed; a rerun of the same request
continues after it. A finished range removes the file, so running a range again replays it again (as rerunning a
`--partition` does). A torn or foreign progress file only means starting the range over, which is always correct:
its first partition's predecessor state is left untouched by the range.
"""
from __future__ import annotations

import datetime as dt
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from .engine.state import fingerprint
from .io.partitions import Partition
from .io.output import WriteSummary
from .io.source import MissingPartitionError
from .semantics.config import ConfigError, JobConfig

PROGRESS = "_range.json"


@dataclass(frozen=True)
class RangeRequest:
    """What `--partitions FROM..TO` asked for; equal requests continue each other's progress."""

    first_id: str
    last_id: str
    first: bool
    previous: str | None
    end_of_input: str  # of the last partition; the others hold
    allow_missing: bool


@dataclass
class RangeSummary:
    planned: int
    replayed: list[str] = field(default_factory=list)
    resumed_after: str | None = None  # the last partition an interrupted run of the same request committed
    totals: WriteSummary | None = None


def parse_range(text: str) -> tuple[Partition, Partition]:
    """`FROM..TO`, both days or both hours, FROM <= TO (inclusive)."""
    lo, sep, hi = text.strip().partition("..")
    if not sep:
        raise ConfigError("--partitions", f"{text!r}: expected FROM..TO (e.g. 2024-01-01..2024-03-31)")
    first, last = Partition.parse(lo), Partition.parse(hi)
    if first.hourly != last.hourly:
        raise ConfigError("--partitions", f"{text!r}: both ends must be days or both hours")
    if last.start_ms < first.start_ms:
        raise ConfigError("--partitions", f"{text!r}: {last.id} is before {first.id}")
    return first, last


def partition_ids(first: Partition, last: Partition) -> list[str]:
    """Every day (or hour) of [first, last]: a partition without a source folder is missing, not skipped."""
    step = first.end_ms - first.start_ms
    fmt = "%Y-%m-%dT%H" if first.hourly else "%Y-%m-%d"
    return [dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).strftime(fmt)
            for ms in range(first.start_ms, last.start_ms + 1, step)]


def run_range(spark, cfg: JobConfig, request: RangeRequest,
              progress: Callable[[str], None] | None = None) -> RangeSummary:
    """Replay request.first_id..request.last_id in order, one commit per partition (see the module doc)."""
    from .job import recover_output, run_partition, source_partitions
    from .io.fs import fs_for
    from .io.lock import output_lock

    say = progress or (lambda line: print(line, flush=True))
    ids = partition_ids(Partition.parse(request.first_id), Partition.parse(request.last_id))
    output = cfg.output.path.rstrip("/")
    fs = fs_for(output, spark)
    with output_lock(output, spark):
        recover_output(spark, output)
        present = set(source_partitions(spark, cfg, "T" in ids[0]))
        missing = [i for i in ids if i not in present]
        if missing and not request.allow_missing:
            # Refused before the first partition runs, not half-way through the range.
            raise MissingPartitionError(f"{len(missing)} partition(s) of {ids[0]}..{ids[-1]} have no folder in "
                                        f"{cfg.source.path}: {', '.join(missing[:10])}"
                                        f"{' ...' if len(missing) > 10 else ''}; replay them as empty with "
                                        "--allow-missing if no data will come")
        summary = RangeSummary(planned=len(ids))
        summary.resumed_after = _resume_point(fs, output, cfg, request, ids)
        start = ids.index(summary.resumed_after) + 1 if summary.resumed_after else 0
        if summary.resumed_after:
            say(f"replay: resuming {ids[0]}..{ids[-1]} after {summary.resumed_after} (committed by an "
                "interrupted run of the same range)")
        _save_progress(fs, output, cfg, request, summary.resumed_after)
        for i in range(start, len(ids)):
            t0 = time.monotonic()
            pid = ids[i]
            continues = ids[i - 1] if i > 0 else request.previous
            s = run_partition(spark, cfg, pid, first=request.first and i == 0,
                              end_of_input=request.end_of_input if i == len(ids) - 1 else "hold",
                              previous=continues, allow_missing=request.allow_missing)
            _save_progress(fs, output, cfg, request, pid)
            summary.replayed.append(pid)
            summary.totals = _add(summary.totals, s)
            say(f"replay: partition {i + 1} of {len(ids)} {pid}{' (missing: empty)' if pid in missing else ''}: "
                f"rows read {s.rows_read}, firings {s.firings}, late rows {s.late_rows}, "
                f"{time.monotonic() - t0:.1f} s")
        fs.delete(f"{output}/{PROGRESS}")
    return summary


def _progress_key(cfg: JobConfig, request: RangeRequest) -> dict:
    return {**asdict(request), "fingerprint": fingerprint(cfg), "source": cfg.source.path}


def _resume_point(fs, output: str, cfg: JobConfig, request: RangeRequest, ids: list[str]) -> str | None:
    """The last partition an interrupted run of this very request committed (None: start at the beginning)."""
    text = fs.read_text(f"{output}/{PROGRESS}")
    if text is None:
        return None
    try:
        saved = json.loads(text)
        same = saved["request"] == _progress_key(cfg, request)
        committed = saved["committed"]
    except (ValueError, KeyError, TypeError):
        same, committed = False, None  # torn or foreign: starting over is always correct
    if same and committed is None:
        return None  # the interrupted run committed nothing
    if not same or committed not in ids:
        print(f"replay: {output}/{PROGRESS} belongs to another range request: replaying "
              f"{ids[0]}..{ids[-1]} from its start", file=sys.stderr, flush=True)
        return None
    return committed


def _save_progress(fs, output: str, cfg: JobConfig, request: RangeRequest, committed: str | None) -> None:
    # Written after the partition's commit: a crash in between only replays that partition once more, which
    # gives the same outputs (its predecessor's state has not changed).
    fs.write_text(f"{output}/{PROGRESS}", json.dumps({"request": _progress_key(cfg, request),
                                                     "committed": committed}, indent=1) + "\n")


def _add(total: WriteSummary | None, s: WriteSummary) -> WriteSummary:
    if total is None:
        return WriteSummary(**asdict(s))
    return WriteSummary(path=s.path, rows_read=total.rows_read + s.rows_read, firings=total.firings + s.firings,
                        rows_in_windows=total.rows_in_windows + s.rows_in_windows,
                        late_rows=total.late_rows + s.late_rows,
                        quarantined_rows=total.quarantined_rows + s.quarantined_rows,
                        skipped_rows=total.skipped_rows + s.skipped_rows)
