"""A partition's carried state on disk, under `<output.path>/_state/<partition>/` (what it means: state.py):

    manifest.json  the state's scalars, written durably (fsync/hsync) after the frames, so a folder with a
                   manifest is complete;
    splits/        one sorted Parquet file (split, t, m);
    rows/          one sorted Parquet file: the rows still held by open windows.

Staged with the partition's outputs and committed with them (io/commit.py), or alone (`write_state`).
One sorted file each: the state is small, and a rerun writes the same bytes."""
from __future__ import annotations

from ..engine.carry import Carry
from ..io.commit import stage_and_commit
from ..io.fs import fs_for
from ..io.output import write_dataset
from ..layout import state_dir
from ..semantics.config import JobConfig
from .partitions import MANIFEST, Partition, predecessor
from .state import CarriedState, Manifest, StateError, checked_manifest, manifest_json

SPLIT_STATE_DDL = "split string, t long, m long"


def read_state(spark, cfg: JobConfig, partition: Partition, previous_id: str | None = None) -> CarriedState:
    """The state `partition` continues from (its predecessor's), validated; a clear StateError otherwise."""
    prev = previous_id or partition.previous().id
    folder = state_dir(cfg.output.path, prev)
    text = fs_for(folder, spark).read_text(f"{folder}/{MANIFEST}")
    if text is None:
        raise StateError(f"partition {partition.id} continues from {prev}, but there is no carried state under "
                         f"{folder}: replay {prev} first (or start a new history with --first)")
    m = checked_manifest(cfg, text, folder, f"{folder}/{MANIFEST}", partition.id, prev)
    carry = Carry(origin_tick=m.origin_tick, stream_watermark=m.stream_watermark, stream_idle=m.stream_idle,
                  splits=list(m.splits), last_offsets=dict(m.last_offsets),
                  split_states=spark.read.schema(SPLIT_STATE_DDL).parquet(f"{folder}/splits"),
                  rows=spark.read.parquet(f"{folder}/rows"))
    return CarriedState(manifest=m, carry=carry)


def continued_state(spark, cfg: JobConfig, part: Partition, previous: str | None = None) -> CarriedState:
    """The carried state `part` continues: `previous`'s, by default its predecessor's (partitions.predecessor: the
    latest partition before it with a source folder or a state)."""
    if previous is None:
        previous = predecessor(spark, cfg, part.id)
        if previous is None:
            raise StateError(f"partition {part.id} has no predecessor under {cfg.source.path}: "
                             "start the history with --first")
    return read_state(spark, cfg, part, previous)


def stage_state(spark, cfg: JobConfig, manifest: Manifest, carry: Carry, staging: str) -> tuple[str, str]:
    """Write a partition's state under `staging`; return the move (staged folder, `_state/<partition>`) that
    commits it together with the partition's outputs (io/commit.py)."""
    folder = state_dir(staging, manifest.partition)
    write_dataset(carry.split_states, ["split"], f"{folder}/splits")
    carry.rows.repartition(1).sortWithinPartitions("arrival_time", "split", "offset") \
        .write.mode("errorifexists").parquet(f"{folder}/rows")
    fs_for(folder, spark).write_text(f"{folder}/{MANIFEST}", manifest_json(manifest))  # durable before the commit
    return folder, state_dir(cfg.output.path, manifest.partition)


def write_state(spark, cfg: JobConfig, manifest: Manifest, carry: Carry) -> str:
    """Write a partition's state on its own, all or nothing; a rerun replaces it. (`replay run --partition`
    stages it with the outputs and commits both at once.)"""
    def stage(staging: str) -> tuple[str, list[tuple[str, str]]]:
        move = stage_state(spark, cfg, manifest, carry, staging)
        return move[1], [move]

    return stage_and_commit(fs_for(cfg.output.path, spark), cfg.output.path, stage)
