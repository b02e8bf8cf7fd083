"""Staging the outputs of a span of partitions, cut by partition (history/span.py: each row carries its partition's
folder columns), and each partition's commit.

Every dataset is written once for the whole span, partitioned by the folder columns (`dt`, `hour`): a
partition's folder then holds the files a write of its rows alone would (io/output._write: the same hash of the
key, the same order), under `<staging>/<dataset>/dt=.../`. A partition with no rows in a dataset gets an empty
file of the dataset's schema, as its own run writes. counts/ has one row per partition, from the source's
per-folder counts and the staged files' footers. The moves of each partition are then committed on their own
(io/commit.py), in order, so that a crash leaves whole partitions.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pyspark.sql import DataFrame, SparkSession

from ..layout import DATASETS
from ..semantics.config import JobConfig
from ..spark import local_frame
from .files import parquet_rows
from .fs import fs_for
from .output import WriteSummary, counts_frame, stage_datasets, summary_of, write_dataset
from .partition_folders import Folder
from .source import SourceData


@dataclass
class StagedPartition:
    partition: Folder
    summary: WriteSummary
    moves: list[tuple[str, str]]


def stage_span_outputs(spark: SparkSession, cfg: JobConfig, source: SourceData, cut, parts: Sequence[Folder],
                       folders: list[str], staging: str) -> list[StagedPartition]:
    """Write every dataset of the span under `staging`, cut by partition; what each partition commits. `cut` has
    the frames `firings`, `late`, `watermarks`, `quarantine`, each row with its partition's `folders` columns."""
    written = stage_datasets(spark, cfg, source, cut.firings, cut.late, cut.watermarks, staging,
                             quarantine=cut.quarantine, folders=folders,
                             watermarks_from_driver=cut.watermarks_from_driver)
    target = cfg.output.path.rstrip("/")
    staged = []
    for p in parts:
        by_status = (source.rows_by_folder or {}).get(p.start_ms, {})
        sub = p.subpath
        summary = summary_of(target, sum(by_status.values()), by_status.get("clean", 0),
                             by_status.get("quarantined", 0), by_status.get("skipped", 0),
                             parquet_rows(spark, f"{staging}/windows/{sub}"),
                             parquet_rows(spark, f"{staging}/late_events/{sub}"),
                             (source.filtered_by_folder or {}).get(p.start_ms, 0))
        staged.append(StagedPartition(p, summary, [(f"{staging}/{ds}/{sub}", f"{target}/{ds}/{sub}")
                                                   for ds in DATASETS]))
    counts = counts_frame(spark, [s.summary for s in staged], [_folder_values(p, folders) for p in parts], folders)
    write_dataset(counts, ["rows_read"], f"{staging}/counts", folders=folders)
    _fill_empty(spark, {name: df.drop(*folders) for name, df in written.items()}, staging, parts)
    return staged


def _folder_values(p: Folder, folders: list[str]) -> tuple:
    """The values of the folder columns (`dt`, and `hour` for hours) of partition `p`."""
    return (p.id[:10], p.id[11:13])[:len(folders)]


def _fill_empty(spark: SparkSession, written: dict[str, DataFrame], staging: str, parts: Sequence[Folder]) -> None:
    """An empty file of the dataset's schema (`written`: the frames written, without the folder columns) in each
    partition folder the partitioned write left out."""
    fs = fs_for(staging, spark)
    for ds, df in written.items():
        empty = None
        for p in parts:
            folder = f"{staging}/{ds}/{p.subpath}"
            if fs.exists(folder):
                continue
            if empty is None:
                empty = f"{staging}/_empty/{ds}"
                local_frame(spark, [], df.schema).repartition(1).write.parquet(empty)
            fs.copy_tree(empty, folder)
