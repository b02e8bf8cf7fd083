"""A partition's carried state on disk, under `<output.path>/_state/<partition>/` (what it means: engine/state.py):

    manifest.json  the state's scalars, written durably (fsync/hsync) after the frames, so a folder with a
                   manifest is complete;
    splits/        one sorted Parquet file (split, t, m);
    rows/          one sorted Parquet file: the rows still held by open windows.

Staged with the partition's outputs and committed with them (io/commit.py), or alone (engine/state.write_state).
One sorted file each: the state is small, and a rerun writes the same bytes."""
from __future__ import annotations

from .fs import fs_for
from ..layout import state_dir

MANIFEST = "manifest.json"
SPLIT_STATE_DDL = "split string, t long, m long"


def read_manifest_text(spark, folder: str) -> str | None:
    """The manifest's text, or None when the folder holds no state."""
    return fs_for(folder, spark).read_text(f"{folder}/{MANIFEST}")


def read_frames(spark, folder: str):
    """(splits, rows), read lazily."""
    return spark.read.schema(SPLIT_STATE_DDL).parquet(f"{folder}/splits"), spark.read.parquet(f"{folder}/rows")


def stage_files(spark, staging: str, partition_id: str, manifest_json: str, splits, rows) -> str:
    """Write a partition's state under `staging`; returns the staged folder."""
    folder = state_dir(staging, partition_id)
    splits.repartition(1).sortWithinPartitions("split").write.mode("errorifexists").parquet(f"{folder}/splits")
    rows.repartition(1).sortWithinPartitions("arrival_time", "split", "offset") \
        .write.mode("errorifexists").parquet(f"{folder}/rows")
    fs_for(folder, spark).write_text(f"{folder}/{MANIFEST}", manifest_json)  # durable before the commit
    return folder
