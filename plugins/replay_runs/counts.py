"""What an output folder counts, read from Parquet footers and the tiny `counts/` dataset (no Spark, no per-row
reads of the large datasets): rows of a dataset, and the summed counts, for all partitions or some (days
`dt=D/...` and hours `dt=D/hour=HH/...` alike)."""
from __future__ import annotations

from pathlib import Path

from event_replay.io.partition_folders import folder_of


def _parquet_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [f for f in sorted(folder.rglob("*.parquet"))
            if not any(p.startswith(("_", ".")) for p in f.relative_to(folder).parts)]


def _in(relative: Path, partitions: list[str]) -> bool:
    """A dataset's file lies in one of the partitions: days (`dt=D/...`) and hours (`dt=D/hour=HH/...`) alike."""
    folders = {folder_of(p) for p in partitions}
    parts = relative.parts
    return "/".join(parts[:1]) in folders or "/".join(parts[:2]) in folders


def num_rows(folder: Path, partitions: list[str] | None = None) -> int | None:
    import pyarrow.parquet as pq

    files = _parquet_files(folder)
    if partitions is not None:
        files = [f for f in files if _in(f.relative_to(folder), partitions)]
    if not folder.is_dir():
        return None
    return sum(pq.ParquetFile(f).metadata.num_rows for f in files)


def summed_counts(folder: Path, partitions: list[str] | None = None) -> dict[str, int]:
    """Sums of the one-row-per-write `counts/` dataset (rows_read, quarantined_rows, ...)."""
    import pyarrow.parquet as pq

    total: dict[str, int] = {}
    for f in _parquet_files(folder):
        if partitions is not None and not _in(f.relative_to(folder), partitions):
            continue
        for row in pq.read_table(f).to_pylist():
            for k, v in row.items():
                if isinstance(v, int):
                    total[k] = total.get(k, 0) + v
    return total
