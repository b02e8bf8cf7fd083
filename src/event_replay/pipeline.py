"""One replay pipeline for every plan: read, replay (`engine.replay`), stage, commit, under the output's lock.

A plan says what is replayed: the whole source (`WholeSource`, every dataset replaced, no state kept), one
partition continuing its predecessor's carried state (`OnePartition`), or a span of consecutive partitions
(`PartitionSpan`, committed partition by partition); the last two share what a plan in a history has
(`HistoryPlan`). The DAG's planner (orchestration/plan.py) plans a backfill as `OnePartition` plans, one per
partition, and each of its Spark jobs as one `PartitionSpan`, serialised once (`PartitionSpan.to_dict`: what
`replay run --plan` reads back). Each plan has one read and one staging of the outputs (the span's variants:
io/span_source.py, io/span_output.py); the pipeline does the rest the same way for all. `replay run` builds a
partition's plan (`OnePartition.checked`) and a range's (`PartitionSpan.checked`) here; range_replay.py runs a
range's; tuning/runner.py reads through WholeSource and replays each variant itself."""
from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from . import engine
from .engine.carry import Carry
from .engine.contract import EngineResult
from .history.partitions import Clock, Partition, parse_range, partition_ids, predecessor
from .history.span import Span, cut_by_partition, stream_at_ends
from .history.state import CarriedState, Manifest, require_declared_splits
from .history.state_files import continued_state, stage_state
from .io.commit import commit, discard_staging, new_staging
from .io.fs import Fs, fs_for
from .io.lock import held_output
from .extension import refusal
from .io.output import WriteSummary, stage_outputs
from .io.partition_source import read_partition_source
from .io.preflight import check_source
from .io.source import SourceData, read_source
from .io.span_output import stage_span_outputs
from .io.span_source import read_span_source
from .layout import state_dir
from .semantics.config import JobConfig


@dataclass
class Commit:
    """One all-or-nothing commit of a plan: its partition (None: the whole source), counts and moves."""

    id: str | None
    summary: WriteSummary
    moves: list[tuple[str, str]]
    stale: list[str] = field(default_factory=list)  # folders removed just before the commit


class Plan:
    """What every plan has unless it says otherwise: no carried state, the config as given, every commit made."""

    with_cause = False  # the firings say which row caused a late firing
    start = 0  # the first of the plan's commits to make (an interrupted run made the ones before)
    subpaths: tuple[str, ...] | None = None  # the source's folders the plan reads (None: the whole source)

    def carried(self, spark, cfg: JobConfig) -> CarriedState | None:
        return None

    def config(self, cfg: JobConfig) -> JobConfig:
        """The config the plan replays with: resolved once, by the pipeline, before anything reads it."""
        return cfg

    def staged(self, commits: list[Commit], seconds: float) -> None:
        """Heard once the replay is staged, before the first commit."""


@dataclass(frozen=True)
class WholeSource(Plan):
    """The whole source: every dataset replaced whole, no state kept."""

    def read(self, spark, cfg: JobConfig, carried: CarriedState | None) -> SourceData:
        return read_source(spark, cfg)

    def clock(self, source: SourceData) -> Clock:
        return Clock.of_source(source)

    def stage(self, spark, cfg: JobConfig, source: SourceData, result: EngineResult, carry: Carry | None,
              carried: CarriedState | None, staging: str) -> list[Commit]:
        summary, moves = stage_outputs(spark, cfg, source, result.windows, result.late_events, result.watermarks,
                                       staging, watermarks_from_driver=result.watermarks_from_driver)
        return [Commit(None, summary, moves)]


@dataclass(frozen=True, kw_only=True)
class HistoryPlan(Plan):
    """A plan in a partition history: it continues `previous`'s carried state (by default the latest partition
    before its first one) unless `first`, ends its input as `end_of_input` says, and fails on a partition with no
    folder in the source unless `allow_missing` (it then replays as empty: time passes, the state carries on)."""

    first: bool = False
    previous: str | None = None
    end_of_input: str = "hold"
    allow_missing: bool = False

    @property
    def head(self) -> Partition:
        """The plan's first partition: the one whose predecessor's state it continues."""
        raise NotImplementedError

    def carried(self, spark, cfg: JobConfig) -> CarriedState | None:
        state = None if self.first else continued_state(spark, cfg, self.head, self.previous)
        # Said before the replay, in the words of the dry run: which history the run continues.
        print(f"replay: {self.head.id} " + (f"continues the carried state of {state.manifest.partition}" if state
                                            else "starts a new history"), file=sys.stderr, flush=True)
        return state

    def config(self, cfg: JobConfig) -> JobConfig:
        return cfg.with_end_of_input(self.end_of_input)


@dataclass(frozen=True)
class OnePartition(HistoryPlan):
    """One partition; its outputs under `<dataset>/dt=.../` and its own state, committed together."""

    partition: Partition

    @staticmethod
    def checked(cfg: JobConfig, partition: str, **history) -> "OnePartition":
        """`replay run --partition`'s plan, checked without Spark: the id parsed, `source.splits` declared (a
        ConfigError otherwise: exit 2); `history`: HistoryPlan's first, previous, end_of_input, allow_missing."""
        p = Partition.parse(partition)
        require_declared_splits(cfg)
        return OnePartition(p, **history)

    @property
    def head(self) -> Partition:
        return self.partition

    @property
    def subpaths(self) -> tuple[str, ...]:
        return (self.partition.subpath,)

    def to_dict(self) -> dict:
        """The plan as plain values (the DAG's plan task hands it on as an XCom, run.json keeps it); `missing`:
        `allow_missing`, the name run records had before the DAG planned with this type."""
        return {"partition": self.partition.id, "first": self.first, "end_of_input": self.end_of_input,
                "previous": self.previous, "missing": self.allow_missing}

    @staticmethod
    def from_dict(d: dict) -> "OnePartition":
        return OnePartition(Partition.parse(d["partition"]), first=d["first"], previous=d["previous"],
                            end_of_input=d["end_of_input"], allow_missing=d.get("missing", False))

    def read(self, spark, cfg: JobConfig, carried: CarriedState | None) -> SourceData:
        p = self.partition
        return read_partition_source(spark, cfg, p.subpath, p.start_ms, p.end_ms, allow_missing=self.allow_missing,
                                     carried_offsets=carried.manifest.last_offsets if carried else None)

    def clock(self, source: SourceData) -> Partition:
        return self.partition

    def stage(self, spark, cfg: JobConfig, source: SourceData, result: EngineResult, carry: Carry | None,
              carried: CarriedState | None, staging: str) -> list[Commit]:
        p = self.partition
        summary, moves = stage_outputs(spark, cfg, source, result.windows, result.late_events, result.watermarks,
                                       staging, p.subpath, watermarks_from_driver=result.watermarks_from_driver)
        # The state last: whoever finds a partition's state finds all its outputs in place.
        manifest = Manifest.after(cfg, p.id, carried.manifest.partition if carried else None, carry)
        return [Commit(p.id, summary, moves + [stage_state(spark, cfg, manifest, carry, staging)])]


@dataclass(frozen=True)
class PartitionSpan(HistoryPlan):
    """Consecutive partitions replayed as one span, its outputs cut by partition (history/span.py) and committed
    partition by partition from index `start` on. Only the last partition's state is written; a stale state of the
    others is removed before their commit. `say` hears the span's replay once it is staged. What `replay run
    --partitions` asks for, and what each of the DAG's Spark jobs receives (`to_dict`)."""

    span: Span
    start: int = 0
    say: Callable[[str], None] | None = field(default=None, compare=False)
    with_cause = True  # a late firing is emitted by the partition of the row that caused it

    @staticmethod
    def between(first_id: str, last_id: str, first: bool = False, previous: str | None = None,
                end_of_input: str = "hold", allow_missing: bool = False) -> "PartitionSpan":
        """Every partition of first_id..last_id (days or hours, inclusive); a bad range is a ConfigError."""
        ids = partition_ids(*parse_range(f"{first_id}..{last_id}"))
        return PartitionSpan(Span(tuple(Partition.parse(i) for i in ids)), first=first, previous=previous,
                             end_of_input=end_of_input, allow_missing=allow_missing)

    @staticmethod
    def checked(cfg: JobConfig, partitions: str, **history) -> "PartitionSpan":
        """`replay run --partitions FROM..TO`'s plan, checked without Spark (as OnePartition.checked)."""
        lo, hi = parse_range(partitions)
        require_declared_splits(cfg)
        return PartitionSpan.between(lo.id, hi.id, **history)

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.span.parts]

    @property
    def head(self) -> Partition:
        return self.span.parts[0]

    @property
    def subpaths(self) -> tuple[str, ...]:
        return tuple(p.subpath for p in self.span.parts)

    def to_dict(self) -> dict:
        """The plan as plain values: what the DAG's planner serialises once per Spark job, `replay run --plan`
        reads back (from_dict) and a range's progress file keys on (history/progress.py)."""
        return {"partitions": f"{self.ids[0]}..{self.ids[-1]}", "first": self.first, "previous": self.previous,
                "end_of_input": self.end_of_input, "missing": self.allow_missing}

    @staticmethod
    def from_dict(d: dict) -> "PartitionSpan":
        lo, _, hi = d["partitions"].partition("..")
        return PartitionSpan.between(lo, hi, first=d["first"], previous=d["previous"], end_of_input=d["end_of_input"],
                                     allow_missing=d["missing"])

    def resolved(self, spark, cfg: JobConfig) -> "PartitionSpan":
        """The plan with the state it continues named (`previous`: partitions.predecessor when not given), so
        that a range typed without --previous and the DAG's (whose planner names it) are the same plan and
        continue each other's progress. A first partition, or one with no predecessor, stays as asked."""
        if self.first or self.previous is not None:
            return self
        return dataclasses.replace(self, previous=predecessor(spark, cfg, self.head.id))

    def read(self, spark, cfg: JobConfig, carried: CarriedState | None) -> SourceData:
        return read_span_source(spark, cfg, list(self.span.parts), self.allow_missing,
                                carried.manifest.last_offsets if carried else None)

    def clock(self, source: SourceData) -> Partition:
        return self.span.whole

    def stage(self, spark, cfg: JobConfig, source: SourceData, result: EngineResult, carry: Carry | None,
              carried: CarriedState | None, staging: str) -> list[Commit]:
        span, ids = self.span, [p.id for p in self.span.parts]
        ends = stream_at_ends(span, result.watermarks, carried.carry.stream_watermark if carried else None,
                              cfg.window.time == "processing")
        cut = cut_by_partition(span, result, ends, source.quarantine)
        staged = stage_span_outputs(spark, cfg, source, cut, span.parts, span.folder_columns, staging)
        # The last partition's state continues from the one before it, as its own run's does.
        previous = ids[-2] if len(ids) > 1 else (carried.manifest.partition if carried else None)
        manifest = Manifest.after(cfg, span.whole.id, previous, carry)
        staged[-1].moves.append(stage_state(spark, cfg, manifest, carry, staging))
        output = cfg.output.path.rstrip("/")
        # A state an earlier run left inside the range would not match these outputs.
        return [Commit(s.partition.id, s.summary, s.moves,
                       [] if s is staged[-1] else [state_dir(output, s.partition.id)]) for s in staged]

    def staged(self, commits: list[Commit], seconds: float) -> None:
        if self.say is not None:
            ids = [p.id for p in self.span.parts]
            self.say(f"replay: {ids[0]}..{ids[-1]} replayed as one span in {seconds:.1f} s ({len(ids)} partitions, "
                     f"rows read {sum(c.summary.rows_read for c in commits)})")


def preflight(cfg: JobConfig) -> str | None:
    """The checks of a run that need no Spark beyond its plan's own (`checked`), for every plan: a local source
    has every role's column (a ConfigError otherwise: exit 2); returns why the run is refused (a session config
    without the extension's jar), or None."""
    check_source(cfg)
    return refusal(cfg)


def run(spark, cfg: JobConfig, plan: Plan) -> WriteSummary:
    """Read, replay, write `plan` under the output's lock; the last commit's counts."""
    with held_output(spark, cfg.output.path):
        summary = None
        for _, summary, _ in commits(spark, cfg, plan):
            pass
        return summary


def commits(spark, cfg: JobConfig, plan: Plan) -> Iterator[tuple[str | None, WriteSummary, float]]:
    """Under held_output: read, replay and stage `plan`, then make its commits one after the other, yielding
    (partition id, counts, seconds of the commit) after each."""
    cfg = plan.config(cfg)
    engine.fixed_plans(spark)
    t0 = time.monotonic()
    output = cfg.output.path.rstrip("/")
    fs = fs_for(output, spark)
    carried = plan.carried(spark, cfg)
    source = plan.read(spark, cfg, carried)
    staging = new_staging(output)
    try:
        # The engine hands back its end state (the Carry) computed: the write below only reads plain data.
        result, carry = engine.replay(spark, source.rows, cfg, source.splits, plan.clock(source),
                                      carried.carry if carried else None, clean_max_offsets=source.clean_max_offsets,
                                      with_cause=plan.with_cause, tick_partials=source.tick_partials)
        fs.mkdirs(output)
        staged = plan.stage(spark, cfg, source, result, carry, carried, staging)
    except BaseException as exc:
        raise discard_staging(fs, output, staging, exc) from exc
    finally:
        source.release()
        engine.release(spark)
    plan.staged(staged, time.monotonic() - t0)
    yield from _commit_each(fs, output, staging, staged, plan.start)


def _commit_each(fs: Fs, output: str, staging: str, staged: list[Commit], start: int):
    for k in range(start, len(staged)):
        t1 = time.monotonic()
        last = k == len(staged) - 1
        for folder in staged[k].stale:
            fs.delete(folder)
        commit(fs, output, staging, staged[k].moves, keep_staging=not last)
        yield staged[k].id, staged[k].summary, time.monotonic() - t1
    if fs.exists(staging):
        fs.delete(staging)
