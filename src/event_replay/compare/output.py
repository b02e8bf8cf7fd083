"""Writing `compare/`: the per-window table, the summary per partition, the late rows on one side only, the page.

    compare/windows/           Parquet, one row per compared window (every class), with the evidence and the
                               explanation of each window that is not plainly equal; 4 files, a window's by a
                               hash of (key, start, end), each sorted by (partition, end, key, start)
    compare/differences.csv    the windows that differ, are duplicated, or fired at another watermark, explained
    compare/late_rows.csv      the late rows on one side only (with --live-late)
    compare/partitions.csv     per partition: windows compared, per class, agreement %, late rows (+ .parquet:
                               the live parity suite's batch)
    compare/summary.json       every figure, the rules, the hints, samples; index.html is rendered from it alone

Written to a staging folder next to the target, then swapped in by renames (a reader never sees half of it). The
folder is local (the page and the small tables are written by the driver).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..layout import COMPARE_PARTITIONS_FILE, COMPARE_SUMMARY_FILE
from ..local_folder import replace_folder, write_one_file
from ..spark_jobs import first_rows, gather
from .classify import CLASSES
from .matching import WINDOW_ID
from .wording import fmt_ms
from .live_spec import CompareInputError
from .page import render

SAMPLE_DIFFERENCES = 50
SAMPLE_LATE = 20
PAGE_FILE = "index.html"
# The explained windows' evidence columns and their types (null in a plainly equal window's row).
EVIDENCE_TYPES = {"held_by": "string", "replay_fire_time_ms": "bigint", "idle_before": "string",
                  "replay_late_n": "bigint", "replay_late_splits": "string", "late_replay_only_n": "bigint",
                  "late_live_only_n": "bigint", "count_delta": "bigint", "missing_split": "string",
                  "source_rows": "string", "explanation": "string"}
WINDOWS_FILES = 4
WINDOWS_ORDER = ["partition", "window_end_ms", "key", "window_start_ms"]  # within each file of windows/
_CLASS_ORDER = {c: i for i, c in enumerate(("value_differs", "replay_only", "live_only", "duplicate", "equal"))}


def _columns(aggs: Sequence[str]) -> list[str]:
    return (["partition", "key", "window_start_ms", "window_end_ms", "class", "differing", "timing"]
            + [f"{side}_{a}" for a in aggs for side in ("replay", "live")]
            + ["replay_firings", "live_rows", "live_versions", "live_copies", "firings_compared", "firings_equal",
               "replay_fire_reason", "replay_fire_watermark_ms", "replay_first_reason", "replay_first_watermark_ms",
               "live_fire_watermark_ms", "live_fire_time_ms"])


def per_window_table(windows: DataFrame, explained: DataFrame, aggs: Sequence[str]) -> DataFrame:
    """Every compared window: the plainly equal ones from `windows`, the others (explained) from `explained`."""
    plain = windows.where((F.col("class") == "equal") & F.col("timing").isNull()).select(
        *_columns(aggs), *[F.lit(None).cast(t).alias(c) for c, t in EVIDENCE_TYPES.items()])
    return _with_times(plain.unionByName(_explained_rows(explained, aggs)))


def _explained_rows(explained: DataFrame, aggs: Sequence[str]) -> DataFrame:
    return explained.select(*_columns(aggs), *[(F.col(c) if c in explained.columns else F.lit(None))
                                               .cast(t).alias(c) for c, t in EVIDENCE_TYPES.items()])


def _with_times(df: DataFrame) -> DataFrame:
    return df.select(*[c for c in df.columns if not c.endswith("_ms")],
                     F.timestamp_millis("window_start_ms").alias("window_start"),
                     F.timestamp_millis("window_end_ms").alias("window_end"),
                     *[c for c in df.columns if c.endswith("_ms")])


def _difference_rows(explained: DataFrame, aggs: Sequence[str]) -> DataFrame:
    """The per-window table's rows that are not plainly equal, readable: they are all explained ones, so the
    plainly equal windows are not read for them."""
    return _differences(_with_times(_explained_rows(explained, aggs)))


def _readable(df: DataFrame) -> DataFrame:
    """Times as UTC text for the CSV and the page."""
    keep = [c for c in df.columns if not c.endswith("_ms") and c not in ("window_start", "window_end")]
    times = [fmt_ms(F.col(c)).alias(c[:-3]) for c in df.columns if c.endswith("_ms")]
    return df.select("partition", "key", "class", *[c for c in keep if c not in ("partition", "key", "class")],
                     *times)


def _first(df: DataFrame, order: list[str], n: int) -> DataFrame:
    """The first n rows by `order` (spark_jobs.first_rows: no global sort, gathered with the other samples)."""
    return first_rows(df, order, n)


def _plain(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: (v if isinstance(v, (int, float, str, bool)) or v is None else str(v)) for k, v in r.items()}
            for r in rows]


def _one_file_sorted(df: DataFrame, order: list[str]) -> DataFrame:
    """One partition sorted in it: the file a global sort then coalesce(1) writes, without the sort's sampling
    job."""
    return df.coalesce(1).sortWithinPartitions(*order)


def _differences(table: DataFrame) -> DataFrame:
    return _readable(table.where((F.col("class") != "equal") | F.col("timing").isNotNull()))


def _late_one_side(late: DataFrame) -> DataFrame:
    return late.where(F.col("class") != "matched").select(
        "partition", "class", "key", "split", "offset", fmt_ms(F.col("time_ms")).alias("time"),
        fmt_ms(F.col("arrival_ms")).alias("arrival"), fmt_ms(F.col("late_watermark_ms")).alias(
            "replay_late_watermark"), "in_replay_n", "in_live_n", "live_duplicates")


def sample_frames(windows: DataFrame, explained: DataFrame, late: DataFrame | None, aggs: Sequence[str]
                  ) -> dict[str, DataFrame]:
    """summary.json's samples (the first differences, the first late rows on one side only): small frames, to
    gather with other figures in one Spark job."""
    diff = _difference_rows(explained, aggs)
    order = F.create_map(*[x for c, i in _CLASS_ORDER.items() for x in (F.lit(c), F.lit(i))])
    samples = {"differences": _first(diff.withColumn("_class_order", order[F.col("class")]),
                                     ["_class_order", "partition", "window_end", "key", "window_start"],
                                     SAMPLE_DIFFERENCES).drop("_class_order")}
    if late is not None:
        samples["late"] = _first(_late_one_side(late), ["partition", "time", "key", "split", "offset"], SAMPLE_LATE)
    return samples


def write_compare(out_dir: str, summary: dict[str, Any], windows: DataFrame, explained: DataFrame,
                  late: DataFrame | None, aggs: Sequence[str],
                  samples: Mapping[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """`samples`: the gathered rows of sample_frames (None: gathered here)."""
    if "://" in out_dir:
        raise CompareInputError("--out", f"{out_dir}: compare/ is written on a local filesystem")
    target = Path(out_dir)
    if samples is None:
        samples = gather(sample_frames(windows, explained, late, aggs))

    def fill(staging: Path) -> None:
        # WINDOWS_FILES files, a window's by a hash of its id, each sorted (as the replay's windows/): which file a
        # row is in and its place there follow from the rows alone, without a global sort's sampling pass
        per_window_table(windows, explained, aggs).repartition(WINDOWS_FILES, *WINDOW_ID) \
            .sortWithinPartitions(*WINDOWS_ORDER).write.parquet(str(staging / "windows"))
        write_one_file(_one_file_sorted(_difference_rows(explained, aggs),
                                        ["partition", "window_end", "key", "window_start"]),
                       staging / "differences.csv")
        summary["files"] = {"windows": "windows/", "differences": "differences.csv", "partitions": "partitions.csv"}
        if late is not None:
            write_one_file(_one_file_sorted(_late_one_side(late), ["partition", "time", "key", "split", "offset"]),
                           staging / "late_rows.csv")
            summary["files"]["late_rows"] = "late_rows.csv"
        summary["differences_sample"] = _plain(samples["differences"])
        summary["classes"] = list(CLASSES)
        if late is not None:
            summary["late_sample"] = samples["late"]
        parts = pd.DataFrame(summary["partitions"])
        parts.to_csv(staging / "partitions.csv", index=False)
        parts.to_parquet(staging / COMPARE_PARTITIONS_FILE, index=False)
        summary["page"] = str(target / PAGE_FILE)
        (staging / COMPARE_SUMMARY_FILE).write_text(json.dumps(summary, indent=2, default=str) + "\n")
        (staging / PAGE_FILE).write_text(render(summary))

    replace_folder(target, fill)
    return summary

