"""The replay job: read, replay, write, under the output's lock, for a whole source (`run_replay`) or one
partition of a `dt=`-partitioned source continuing its predecessor's state (`run_partition`). What `replay run`,
`jobs/replay_job.py` (the Airflow tasks), the range replay, the benchmarks and the tests call; the CLI only parses
arguments around it."""
from __future__ import annotations

import sys

from .layout import STATE_FOLDER
from .semantics.config import JobConfig


def run_replay(spark, cfg: JobConfig):
    """Read, replay, write: the whole job on an existing Spark session. Returns the io.WriteSummary.

    Under the output's lock (io/lock.py); an interrupted commit of an earlier run is rolled forward first."""
    from . import engine
    from .io import read_source, write_outputs
    from .io.lock import output_lock
    from .io.scratch import scratch_space

    engine.fixed_plans(spark)
    with output_lock(cfg.output.path, spark), scratch_space(spark, cfg.output.path):
        recover_output(spark, cfg.output.path)
        source = read_source(spark, cfg)
        try:
            result, _ = engine.replay(spark, source.rows, cfg, source.splits, source.clock(),
                                      tick_partials=source.tick_partials)
            return write_outputs(spark, cfg, source, result.windows, result.late_events, result.watermarks)
        finally:
            source.release()
            engine.release(spark)


def recover_output(spark, output: str) -> None:
    """Under the lock: finish an interrupted commit (journal found), drop staging left by runs that died."""
    from .io.commit import recover, remove_orphan_staging

    done = recover(output, spark)
    if done:
        print(f"replay: {output}: {done}", file=sys.stderr, flush=True)
    for name in remove_orphan_staging(output, spark):
        print(f"replay: {output}: removed {name} (left by a run that died before committing)", file=sys.stderr,
              flush=True)


def source_partitions(spark, cfg: JobConfig, hourly: bool) -> list[str]:
    """The partition ids with a folder under source.path (io/partitions.py), ascending."""
    from .io.fs import fs_for
    from .io.partitions import partitions_present

    return partitions_present(fs_for(cfg.source.path, spark), cfg.source.path, hourly)


def run_partition(spark, cfg: JobConfig, partition: str, *, first: bool = False, end_of_input: str = "hold",
                  previous: str | None = None, allow_missing: bool = False):
    """Replay one partition of a `dt=`-partitioned source, continuing from its predecessor's carried state
    (`<output.path>/_state/<previous>/`) unless `first`; write its outputs under `<output.path>/<dataset>/dt=.../`
    and its own state, committed together (io/commit.py). `previous` defaults to the latest source partition
    before this one. A partition with no folder in the source fails unless `allow_missing` (then it replays as
    empty: time passes, the state carries on)."""
    from . import engine
    from .engine.state import require_declared_splits, stage_state
    from .io import read_partition_source, write_outputs
    from .io.partitions import Partition
    from .io.lock import output_lock
    from .io.scratch import scratch_space

    require_declared_splits(cfg)
    part = Partition.parse(partition)
    output = cfg.output.path.rstrip("/")
    engine.fixed_plans(spark)
    with output_lock(output, spark), scratch_space(spark, output):
        recover_output(spark, output)
        carried = None if first else continued_state(spark, cfg, part, previous)
        source = read_partition_source(spark, cfg, part.subpath, part.start_ms, part.end_ms,
                                       allow_missing=allow_missing,
                                       carried_offsets=carried.manifest.last_offsets if carried else None)
        try:
            result, end = engine.replay(spark, source.rows, cfg.with_end_of_input(end_of_input), source.splits,
                                        part, carried, clean_max_offsets=source.clean_max_offsets,
                                        tick_partials=source.tick_partials)
            # The state last: whoever finds a partition's state finds all its outputs in place.
            summary = write_outputs(spark, cfg, source, result.windows, result.late_events, result.watermarks,
                                    partition_subpath=part.subpath,
                                    stage_last=lambda staging: stage_state(spark, cfg, end.manifest, end.splits,
                                                                           end.rows, staging))
            return summary
        finally:
            source.release()
            engine.release(spark)


def continued_state(spark, cfg: JobConfig, part, previous: str | None = None):
    """The carried state `part` continues: `previous`'s, by default the latest partition before it that has a
    source folder or a state (a partition replayed without a folder, --allow-missing, is the predecessor too, so
    that the history is not silently cut around it)."""
    from .engine.state import StateError, read_state
    from .io.fs import fs_for

    if previous is None:
        output = cfg.output.path.rstrip("/")
        earlier = [p for p in source_partitions(spark, cfg, part.hourly) if p < part.id]
        states = fs_for(output, spark).list_names(f"{output}/{STATE_FOLDER}")
        earlier = sorted(set(earlier) | {s for s in states if s < part.id and len(s) == len(part.id)})
        if not earlier:
            raise StateError(f"partition {part.id} has no predecessor under {cfg.source.path}: "
                             "start the history with --first")
        previous = earlier[-1]
    return read_state(spark, cfg, part, previous)
