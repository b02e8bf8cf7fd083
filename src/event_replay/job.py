"""The replay job: read, replay, write, under the output's lock, for a whole source (`run_replay`) or one
partition of a `dt=`-partitioned source continuing its predecessor's state (`run_partition`). What `replay run`,
`jobs/replay_job.py` (the Airflow tasks), the range replay, the benchmarks and the tests call; the CLI only parses
arguments around it."""
from __future__ import annotations

import sys

from .semantics.config import JobConfig


def run_replay(spark, cfg: JobConfig):
    """Read, replay, write: the whole job on an existing Spark session. Returns the io.WriteSummary.

    Under the output's lock (io/lock.py); an interrupted commit of an earlier run is rolled forward first."""
    from . import engine
    from .history.partitions import Clock
    from .io import read_source, write_outputs
    from .io.lock import output_lock
    from .io.scratch import scratch_space

    engine.fixed_plans(spark)
    with output_lock(cfg.output.path, spark), scratch_space(spark, cfg.output.path):
        recover_output(spark, cfg.output.path)
        source = read_source(spark, cfg)
        try:
            result, _ = engine.replay(spark, source.rows, cfg, source.splits, Clock.of_source(source),
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


def run_partition(spark, cfg: JobConfig, partition: str, *, first: bool = False, end_of_input: str = "hold",
                  previous: str | None = None, allow_missing: bool = False):
    """Replay one partition of a `dt=`-partitioned source, continuing from its predecessor's carried state
    (`<output.path>/_state/<previous>/`) unless `first`; write its outputs under `<output.path>/<dataset>/dt=.../`
    and its own state, committed together (io/commit.py). `previous` defaults to the latest source partition
    before this one. A partition with no folder in the source fails unless `allow_missing` (then it replays as
    empty: time passes, the state carries on)."""
    from . import engine
    from .history.partitions import Partition
    from .history.state import Manifest, require_declared_splits
    from .history.state_files import continued_state, stage_state
    from .io import read_partition_source
    from .io.commit import stage_and_commit
    from .io.fs import fs_for
    from .io.lock import output_lock
    from .io.output import stage_outputs
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
            pcfg = cfg.with_end_of_input(end_of_input)
            result, end = engine.replay(spark, source.rows, pcfg, source.splits, part,
                                        carried.carry if carried else None,
                                        clean_max_offsets=source.clean_max_offsets,
                                        tick_partials=source.tick_partials)

            def stage(staging: str):
                summary, moves = stage_outputs(spark, cfg, source, result.windows, result.late_events,
                                               result.watermarks, staging, part.subpath)
                # The state last: whoever finds a partition's state finds all its outputs in place.
                manifest = Manifest.after(pcfg, part.id, carried.manifest.partition if carried else None, end.carry)
                return summary, moves + [stage_state(spark, cfg, manifest, end.carry, staging)]

            return stage_and_commit(fs_for(output, spark), output, stage)
        finally:
            source.release()
            engine.release(spark)
