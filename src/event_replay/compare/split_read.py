"""A split the live job never read: per window the live output lacks rows of, its rows per split in the source, and
the split whose rows are exactly what is lacking (one scan of the source restricted to those windows' keys and
times; `--no-source` skips it). The hint names the split only when it explains (nearly) every window it has rows
in (NEVER_READ_SHARE of them), and never for rows the live late output holds (those were read, and late).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..io.parquet_footer import read_parquet
from ..quality.prepare import to_ms
from ..semantics.config import JobConfig
from .evidence import with_windows
from .checkpoint import on_disk
from .matching import WINDOW_ID

NEVER_READ_SHARE = 0.9  # of the windows with rows of the split that lack rows, those that lack exactly its rows

def read_source(spark: SparkSession, cfg: JobConfig, roles: Sequence[str]) -> DataFrame | None:
    """The source's `roles` (split, key as strings; time: the windows' time, arrival: the arrival time, epoch ms)
    of the config's splits; None when it cannot be read as the config says (it may have moved since the replay:
    no evidence, not a failure)."""
    src = cfg.source
    reader = spark.read.format(src.format)
    if src.format == "csv":
        reader = reader.option("header", "true")
    try:
        # Parquet: its schema from the first file's footer, no Spark job to infer it (io/parquet_footer.py)
        raw = read_parquet(spark, src.path) if src.format == "parquet" else reader.load(src.path)
    except Exception:  # noqa: BLE001 - see the docstring
        return None
    names = {"split": src.columns["split"], "key": src.columns["key"], "arrival": src.columns["arrival_time"],
             "time": src.columns["event_time" if cfg.window.time == "event" else "arrival_time"]}
    if any(names[r] not in raw.columns for r in roles):
        return None
    cols = [F.col(f"`{names[r]}`").cast("string").alias(r) if r in ("split", "key")
            else to_ms(F.col(f"`{names[r]}`"), raw.schema[names[r]].dataType).alias(r) for r in roles]
    rows = raw.select(*cols)
    return rows.where(F.col("split").isin(list(src.splits))) if src.splits and "split" in roles else rows


def needing_bounds(needing: DataFrame) -> DataFrame:
    """The span and keys of the windows that need the source (one row: lo, hi, keys, key_set), a small frame to
    gather with other figures (source_evidence's `bounds`)."""
    return needing.agg(F.min("window_start_ms").alias("lo"), F.max("window_end_ms").alias("hi"),
                       F.count_distinct("key").alias("keys"), F.collect_set("key").alias("key_set"))


def source_evidence(spark: SparkSession, cfg: JobConfig, needing: DataFrame,
                    bounds: Mapping[str, Any] | None = None) -> DataFrame | None:
    """Per window of `needing`: its rows in the source per split, as `split n, split n` and a map. `bounds`: the
    gathered row of needing_bounds, else collected here (a Spark job)."""
    rows = read_source(spark, cfg, ("split", "key", "time"))
    if rows is None:
        return None
    if bounds is None:
        bounds = needing_bounds(needing).first()
    if bounds is None or bounds["lo"] is None:  # nothing needs the source
        return None
    lo = bounds["lo"] - (cfg.window.gap_ms or 0)
    rows = rows.where(F.col("time").between(lo, bounds["hi"]))
    if bounds["keys"] <= 1000:
        rows = rows.where(F.col("key").isin(sorted(bounds["key_set"])))
    j = with_windows(rows, "time", cfg, needing)
    per = j.groupBy(*WINDOW_ID, "split").agg(F.count(F.lit(1)).alias("n"))
    return per.groupBy(*WINDOW_ID).agg(
        F.map_from_entries(F.collect_list(F.struct("split", "n"))).alias("source_rows_by_split"),
        F.array_join(F.array_sort(F.collect_list(F.concat(F.col("split"), F.lit(" "), F.col("n").cast("string")))),
                     ", ").alias("source_rows"))


def with_missing_split(ev: DataFrame, source: DataFrame | None, cnt: str) -> DataFrame:
    """`source_rows`, `source_rows_by_split` and `missing_split` on the windows of `ev` (nulls without a source)."""
    if source is None:
        return ev.withColumn("source_rows", F.lit(None).cast("string")) \
            .withColumn("source_rows_by_split", F.lit(None).cast("map<string,bigint>")) \
            .withColumn("missing_split", F.lit(None).cast("string"))
    ev = ev.join(source, WINDOW_ID, "left")
    lacking = F.when(F.col("class") == "replay_only", F.col(f"replay_{cnt}")).otherwise(-F.col("count_delta"))
    # The splits whose rows in the window are exactly what the live output lacks; when several are (a window
    # of few rows), the one that is a candidate in the most windows.
    cands = F.transform(F.filter(F.map_entries(F.col("source_rows_by_split")), lambda e: e["value"] == lacking),
                        lambda e: e["key"])
    # checkpointed when first computed: by the job below, which the explained windows then read
    ev = on_disk(ev.withColumn("_cands", cands))
    best = (ev.select(F.explode("_cands").alias("s")).groupBy("s").count()
            .orderBy(F.col("count").desc(), "s").first())
    if best is not None and best["count"] >= 2:  # one split lacking across windows: only it is named
        pick: Column = F.when(F.array_contains("_cands", best["s"]), F.lit(best["s"]))
    else:
        pick = F.when(F.size("_cands") == 1, F.col("_cands")[0])
    return ev.withColumn("missing_split", pick).drop("_cands")


def missing_split_stats(ev: DataFrame) -> DataFrame:
    """Per split, the windows with its rows that the live output lacks rows of (`with_rows`), and those whose
    lacking rows are exactly its (`explained`): missing_split_hint's figures, a small frame to gather. Windows
    whose missing rows the live late output holds are left out: those rows were read, and late (a live watermark
    ahead of the replay's, e.g. a shorter idle timeout), not unread."""
    read_late = F.coalesce(F.col("late_live_only_n"), F.lit(0)) > 0
    with_rows = ev.where(F.col("source_rows_by_split").isNotNull() & ~read_late).select(
        "missing_split", F.explode(F.map_keys("source_rows_by_split")).alias("split"))
    return with_rows.groupBy("split").agg(F.count(F.lit(1)).alias("with_rows"),
                                          F.sum((F.col("missing_split") == F.col("split")).cast("long"))
                                          .alias("explained"))


def missing_split_hint(stats: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A split whose rows are exactly what the live output lacks, in (nearly) every window it has rows in (the rows
    of missing_split_stats)."""
    best = max(stats, key=lambda s: (s["explained"] or 0, s["split"]), default=None)
    # A split never read leaves every window with its rows short by exactly them: most of them is not enough (a
    # live watermark ahead of the replay's, e.g. a shorter idle timeout, drops some split's rows now and then).
    if best is None or (best["explained"] or 0) < max(2, NEVER_READ_SHARE * best["with_rows"]):
        return None
    s = best["split"]
    return {"kind": "split_not_read", "windows": int(best["explained"]), "split": s, "text": (
        f"In {best['explained']} of the {best['with_rows']} windows with rows of split {s} that the live output "
        f"lacks rows of, what it lacks is exactly split {s}'s rows: the live job did not read split {s} (an input "
        "partition it never saw, or lost). Its watermark then never waited for that split either, which explains "
        "other differences around it.")}

