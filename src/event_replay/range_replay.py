"""`replay run --partitions FROM..TO`: a range of day (or hour) partitions replayed in one Spark application.

Each partition continues the state of the one before (SEMANTICS §6 `hold`), and partitions replayed one by one
give exactly the outputs of one replay of the whole range. So the range is replayed once, as one span from its
first partition's predecessor (io/span_source.py reads every folder in one scan, each row cut to its own folder),
and its outputs are cut by partition afterwards (history/span.py says which partition emits each output row,
io/span_output.py stages each dataset once, partitioned by folder): every partition gets the outputs its own
`--partition` run writes, and the range's last partition its carried state. The partitions inside a range leave
no state (each would cost a write per partition; nothing continues from them) and a stale one is removed.

Every partition is committed on its own, in order, so a crash leaves whole partitions. A small progress file
`<output.path>/_range.json` names the request and the last partition committed; a rerun of the same request
replays the span again and commits only the partitions after it. A finished range removes the file, so running a
range again replays it again (as rerunning a `--partition` does). A torn or foreign progress file only means
starting the range over, which is always correct: the range never touches its first partition's predecessor.
"""
from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from typing import Callable

from .history.partitions import Partition, source_partitions
from .history.progress import clear_progress, resume_point, save_progress
from .history.span import Span
from .history.state import require_declared_splits
from .io.files import DamagedFileError, damage, data_files
from .io.fs import fs_for, hadoop_fs
from .io.output import WriteSummary
from .io.partition_source import MissingPartitionError
from .layout import state_dir
from .io.lock import held_output
from .pipeline import PartitionSpan, commits
from .semantics.config import JobConfig


@dataclass
class RangeSummary:
    planned: int
    replayed: list[str] = field(default_factory=list)
    resumed_after: str | None = None  # the last partition an interrupted run of the same request committed
    totals: WriteSummary | None = None


def run_range(spark, cfg: JobConfig, plan: PartitionSpan,
              progress: Callable[[str], None] | None = None) -> RangeSummary:
    """Replay the plan's span (`replay run --partitions`, or `--plan` as the DAG's jobs pass it) as one span, then
    commit it partition by partition (see the module doc)."""
    say = progress or (lambda line: print(line, flush=True))
    plan = plan.resolved(spark, cfg)  # its progress key names the state it continues, as the planner's does
    request, ids = plan.to_dict(), plan.ids
    output = cfg.output.path.rstrip("/")
    fs = fs_for(output, spark)
    with held_output(spark, cfg.output.path):
        present = set(source_partitions(spark, cfg, "T" in ids[0]))
        missing = [i for i in ids if i not in present]
        if missing and not plan.allow_missing:
            # Refused before the first partition runs, not half-way through the range.
            raise MissingPartitionError(f"{len(missing)} partition(s) of {ids[0]}..{ids[-1]} have no folder in "
                                        f"{cfg.source.path}: {', '.join(missing[:10])}"
                                        f"{' ...' if len(missing) > 10 else ''}; replay them as empty with "
                                        "--allow-missing if no data will come")
        summary = RangeSummary(planned=len(ids))
        summary.resumed_after = resume_point(fs, output, cfg, request, ids)
        if summary.resumed_after:
            say(f"replay: resuming {ids[0]}..{ids[-1]} after {summary.resumed_after} (committed by an "
                "interrupted run of the same range): the span is replayed again, only the rest is committed")
        save_progress(fs, output, cfg, request, summary.resumed_after)
        start = ids.index(summary.resumed_after) + 1 if summary.resumed_after else 0
        # A damaged source file stops the range before its partition: the ones before it are committed (held, as
        # inside the range), then the run fails naming the file; a rerun once it is fixed continues after them.
        damaged = first_damaged(spark, cfg, ids)
        stop = damaged[0] if damaged else len(ids)
        span_plan = plan if stop == len(ids) else dataclasses.replace(plan, end_of_input="hold")
        # (start == len(ids): an interrupted run committed every partition and died before its last words.)
        for pid, s, seconds in (replay_span(spark, cfg, span_plan, stop, start, say) if start < stop else ()):
            save_progress(fs, output, cfg, request, pid)
            summary.replayed.append(pid)
            summary.totals = _add(summary.totals, s)
            i = ids.index(pid)
            say(f"replay: partition {i + 1} of {len(ids)} {pid}{' (missing: empty)' if pid in missing else ''}: "
                f"rows read {s.rows_read}, firings {s.firings}, late rows {s.late_rows}, committed in "
                f"{seconds:.1f} s")
        if damaged:
            _, path, cause = damaged
            if stop < start:  # in a partition committed before: the span cannot be read again
                done = (f"partitions {ids[0]}..{ids[start - 1]} were committed before, {ids[start]}..{ids[-1]} "
                        f"are not (the range is read from {ids[0]} on)")
            elif stop > 0:
                done = f"partitions {ids[0]}..{ids[stop - 1]} are committed, {ids[stop]}..{ids[-1]} are not"
            else:
                done = f"no partition of {ids[0]}..{ids[-1]} was committed"
            raise DamagedFileError(path, cause, done)
        clear_progress(fs, output)
    return summary


def first_damaged(spark, cfg: JobConfig, ids: list[str]) -> tuple[int, str, str] | None:
    """(index in ids, file, cause) of the first partition with a source file that cannot be read, or None."""
    root = cfg.source.path.rstrip("/")
    for i, pid in enumerate(ids):
        path = f"{root}/{Partition.parse(pid).subpath}"
        fs, hp = hadoop_fs(spark, path)
        if not fs.exists(hp):
            continue
        for f in data_files(spark, path):
            cause = damage(spark, f, cfg.source.format)
            if cause is not None:
                return i, f, cause
    return None


def replay_span(spark, cfg: JobConfig, plan: PartitionSpan, stop: int, start: int, say: Callable[[str], None]):
    """Under the output's lock: replay the plan's first `stop` partitions as one span from its first partition's
    predecessor and commit partitions [start, stop) one after the other: yields (id, WriteSummary, seconds of its
    commit) after each commit. Then removes the states an earlier, stopped run of the range left before `start`."""
    require_declared_splits(cfg)
    ids = plan.ids[:stop]
    yield from commits(spark, cfg, dataclasses.replace(plan, span=Span(plan.span.parts[:stop]), start=start, say=say))
    output = cfg.output.path.rstrip("/")
    fs = fs_for(output, spark)
    for k in range(min(start, len(ids) - 1)):  # a state an earlier, stopped run of the range left inside it
        fs.delete(state_dir(output, ids[k]))


def _add(total: WriteSummary | None, s: WriteSummary) -> WriteSummary:
    if total is None:
        return WriteSummary(**asdict(s))
    return WriteSummary(path=s.path, rows_read=total.rows_read + s.rows_read, firings=total.firings + s.firings,
                        rows_in_windows=total.rows_in_windows + s.rows_in_windows,
                        late_rows=total.late_rows + s.late_rows,
                        quarantined_rows=total.quarantined_rows + s.quarantined_rows,
                        skipped_rows=total.skipped_rows + s.skipped_rows,
                        filtered_rows=total.filtered_rows + s.filtered_rows)
