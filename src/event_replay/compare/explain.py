"""Explaining each difference with what the replay knows, and what that suggests about the live job.

For every window that is not plainly equal (a difference, a duplicate, or equal values fired at another
watermark), evidence is gathered in Spark, joined per window:
- late rows: the replay's late rows of the window (late_events/, with the watermark they saw) and, with the live
  late output, the rows late on one side only. A row belongs to the windows of its key that contain its time
  (tumbling and sliding windows computed from the config; sessions: the compared windows it would overlap);
- which split held the stream when the replay first fired the window (attribution.holders: the split
  whose published watermark the stream reached; "all-idle jump"; the end of input), and the replay time it fired;
- idle spans around that firing: the splits that went idle on the replay clock in the idle timeout (plus three
  intervals) before it (watermarks/);
- per split, the rows of the window in the source (only for windows whose live count is lower, or that the live
  output lacks; one scan of the source restricted to those windows' keys and times; `--no-source` skips it):
  when the missing rows are exactly one split's, the live job did not read that split.
Each window's `explanation` is a sentence per finding, built by Spark expressions (no row goes to the driver), and
`hints` (driver side, from aggregates) say what the differences together suggest: the live watermark behind or
ahead of the replay's (which settings to calibrate: `replay tune --against-live`), a split never read, a changed
aggregate (a constant ratio or offset), duplicates from a re-emitted span, windows the live job had not fired yet.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Sequence

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..attribution import holders
from ..quality.prepare import count_star_column, to_ms
from ..semantics.config import JobConfig
from ..semantics.durations import NEG_INF, POS_INF, format_duration
from .matching import WINDOW_ID

ALL_IDLE = "all-idle jump"


def fmt_ms(c: Column) -> Column:
    return (F.when(c.isNull(), F.lit("?")).when(c >= F.lit(POS_INF), F.lit("+inf"))
            .when(c <= F.lit(NEG_INF), F.lit("-inf"))
            .otherwise(F.date_format(F.timestamp_millis(c), "yyyy-MM-dd HH:mm:ss.SSS")))


def _fmt_duration(ms: int | None) -> str:
    return "none" if ms is None else format_duration(ms)


# -- assigning rows to windows ----------------------------------------------------------------------------------

def with_windows(rows: DataFrame, time_col: str, cfg: JobConfig, windows: DataFrame) -> DataFrame:
    """Each row of `rows` (with `key` and `time_col`) joined with the windows of `windows` (WINDOW_ID) of its key
    that contain its time; sessions: that it would overlap ([t, t + gap) meets [start, end))."""
    w = cfg.window
    t = F.col(time_col)
    ids = windows.select(*WINDOW_ID).distinct()
    if w.type == "tumbling":
        start = t - F.pmod(t - F.lit(w.offset_ms), F.lit(w.size_ms))
        r = rows.withColumn("window_start_ms", start).withColumn("window_end_ms", start + F.lit(w.size_ms))
        return r.join(ids, WINDOW_ID)
    if w.type == "sliding":
        n = -(-w.size_ms // w.slide_ms)
        last = t - F.pmod(t - F.lit(w.offset_ms), F.lit(w.slide_ms))
        r = rows.withColumn("_k", F.explode(F.sequence(F.lit(0), F.lit(n - 1))))
        r = r.withColumn("window_start_ms", last - F.col("_k") * F.lit(w.slide_ms)).drop("_k")
        r = r.where(F.col("window_start_ms") + F.lit(w.size_ms) > t) \
            .withColumn("window_end_ms", F.col("window_start_ms") + F.lit(w.size_ms))
        return r.join(ids, WINDOW_ID)
    gap = w.gap_ms or 0
    ws = ids.select(F.col("key").alias("_wk"), "window_start_ms", "window_end_ms")
    cond = (rows.key == ws._wk) & (t < ws.window_end_ms) & (t + F.lit(gap) > ws.window_start_ms)
    return rows.join(ws, cond).drop("_wk")


# -- evidence ---------------------------------------------------------------------------------------------------

def _late_evidence(late: DataFrame, cfg: JobConfig, diff: DataFrame) -> DataFrame:
    j = with_windows(late.select("key", "time_ms", "split", "late_watermark_ms"), "time_ms", cfg, diff)
    return j.groupBy(*WINDOW_ID).agg(
        F.count(F.lit(1)).alias("replay_late_n"), F.min("late_watermark_ms").alias("replay_late_wm"),
        F.array_join(F.array_sort(F.collect_set("split")), ",").alias("replay_late_splits"))


def _late_match_evidence(late_match: DataFrame, cfg: JobConfig, diff: DataFrame) -> DataFrame:
    one_side = late_match.where((F.col("replay_only") > 0) | (F.col("live_only") > 0))
    j = with_windows(one_side.select("key", "time_ms", "replay_only", "live_only", "late_watermark_ms"), "time_ms",
                     cfg, diff)
    return j.groupBy(*WINDOW_ID).agg(F.sum("replay_only").alias("late_replay_only_n"),
                                     F.sum("live_only").alias("late_live_only_n"))


def _holders(watermarks: DataFrame, diff: DataFrame) -> DataFrame:
    h = holders(watermarks.select("scope", "split", "idle", "watermark_ms", "replay_time_ms"))
    first = diff.select(*WINDOW_ID, "replay_first_watermark_ms").where(F.col("replay_first_watermark_ms").isNotNull())
    j = first.join(h, first.replay_first_watermark_ms == h.W, "left")
    return j.select(*WINDOW_ID, F.col("holder").alias("held_by"), F.col("e_time").alias("replay_fire_time_ms"))


def idle_spans(watermarks: DataFrame) -> DataFrame:
    """(split, idle_from, idle_to): when each split was idle on the replay clock (idle_to null: to the end)."""
    s = watermarks.where(F.col("scope") == "split")
    order = Window.partitionBy("split").orderBy("replay_time_ms", F.col("watermark_ms").asc_nulls_first())
    s = s.withColumn("_next", F.lead("replay_time_ms").over(order)).withColumn(
        "_prev_idle", F.lag("idle").over(order))
    return s.where(F.col("idle") & ~F.coalesce(F.col("_prev_idle"), F.lit(False))).select(
        "split", F.col("replay_time_ms").alias("idle_from"), F.col("_next").alias("idle_to"))


def _idle_evidence(spans: DataFrame, fired: DataFrame, cfg: JobConfig) -> DataFrame:
    """The splits that went idle in the idle timeout (plus three intervals) before the replay fired the window."""
    wm = cfg.watermark
    if not wm.periodic or not wm.idle_timeout_ms:
        return fired.select(*WINDOW_ID).limit(0).withColumn("idle_before", F.lit(None).cast("string"))
    reach = wm.idle_timeout_ms + 3 * wm.interval_ms
    bucket = max(reach, 60_000)
    f = fired.where(F.col("replay_fire_time_ms").isNotNull()).select(*WINDOW_ID, "replay_fire_time_ms")
    f = f.withColumn("_b", F.explode(F.array_distinct(F.array(
        F.floor((F.col("replay_fire_time_ms") - reach) / bucket), F.floor(F.col("replay_fire_time_ms") / bucket)))))
    s = spans.withColumn("_b", F.floor(F.col("idle_from") / bucket))
    j = f.join(s, "_b").where((F.col("idle_from") <= F.col("replay_fire_time_ms"))
                               & (F.col("idle_from") >= F.col("replay_fire_time_ms") - reach))
    text = F.concat(F.col("split"), F.lit(" at "), fmt_ms(F.col("idle_from")))
    return j.groupBy(*WINDOW_ID).agg(F.array_join(F.array_sort(F.collect_set(text)), ", ").alias("idle_before"))


def _source_evidence(spark: SparkSession, cfg: JobConfig, needing: DataFrame) -> DataFrame | None:
    """Per window of `needing`: its rows in the source per split, as `split n, split n` and a map."""
    src = cfg.source
    reader = spark.read.format(src.format)
    if src.format == "csv":
        reader = reader.option("header", "true")
    try:
        raw = reader.load(src.path)
    except Exception:  # noqa: BLE001 - the source may have moved since the replay: no evidence, not a failure
        return None
    cols = src.columns
    time_role = "event_time" if cfg.window.time == "event" else "arrival_time"
    if any(cols[r] not in raw.columns for r in ("split", "key", time_role)):
        return None
    bounds = needing.agg(F.min("window_start_ms").alias("lo"), F.max("window_end_ms").alias("hi"),
                         F.count_distinct("key").alias("keys")).first()
    if bounds is None or bounds.lo is None:
        return None
    t = to_ms(F.col(f"`{cols[time_role]}`"), raw.schema[cols[time_role]].dataType)
    rows = raw.select(F.col(f"`{cols['split']}`").cast("string").alias("split"),
                      F.col(f"`{cols['key']}`").cast("string").alias("key"), t.alias("t"))
    lo = bounds.lo - (cfg.window.gap_ms or 0)
    rows = rows.where(F.col("t").between(lo, bounds.hi))
    if bounds.keys <= 1000:
        keys = [r.key for r in needing.select("key").distinct().collect()]
        rows = rows.where(F.col("key").isin(keys))
    if src.splits:
        rows = rows.where(F.col("split").isin(list(src.splits)))
    j = with_windows(rows, "t", cfg, needing)
    per = j.groupBy(*WINDOW_ID, "split").agg(F.count(F.lit(1)).alias("n"))
    return per.groupBy(*WINDOW_ID).agg(
        F.map_from_entries(F.collect_list(F.struct("split", "n"))).alias("source_rows_by_split"),
        F.array_join(F.array_sort(F.collect_list(F.concat(F.col("split"), F.lit(" "), F.col("n").cast("string")))),
                     ", ").alias("source_rows"))


@dataclass
class Explained:
    windows: DataFrame  # the non-equal windows with evidence and explanation
    hints: list[dict[str, Any]]
    count_agg: str | None


def explain(spark: SparkSession, cfg: JobConfig, classified: DataFrame, replay_late: DataFrame,
            watermarks: DataFrame, late_match: DataFrame | None, aggs: Sequence[str], has: frozenset[str],
            use_source: bool = True) -> Explained:

    cnt = count_star_column(cfg)
    cnt = cnt if cnt in aggs else None
    diff = classified.where((F.col("class") != "equal") | F.col("timing").isNotNull()).localCheckpoint(eager=True)
    if diff.isEmpty():
        return Explained(windows=diff.withColumn("explanation", F.lit(None).cast("string")), hints=[], count_agg=cnt)
    ev = diff.join(_late_evidence(replay_late, cfg, diff), WINDOW_ID, "left")
    if late_match is not None:
        ev = ev.join(_late_match_evidence(late_match, cfg, diff), WINDOW_ID, "left")
    else:
        ev = ev.withColumn("late_replay_only_n", F.lit(None).cast("long")) \
            .withColumn("late_live_only_n", F.lit(None).cast("long"))
    fired = _holders(watermarks, diff)
    ev = ev.join(fired, WINDOW_ID, "left")
    ev = ev.join(_idle_evidence(idle_spans(watermarks), fired, cfg), WINDOW_ID, "left")
    ev = ev.fillna(0, ["replay_late_n"])
    if cnt is not None:
        ev = ev.withColumn("count_delta", F.col(f"live_{cnt}") - F.col(f"replay_{cnt}"))
    else:
        ev = ev.withColumn("count_delta", F.lit(None).cast("long"))
    source = None
    if use_source and cnt is not None:
        needing = ev.where((F.col("class") == "replay_only")
                           | ((F.col("class") == "value_differs") & (F.col("count_delta") < 0)))
        if not needing.isEmpty():
            source = _source_evidence(spark, cfg, needing.select(*WINDOW_ID))
    if source is not None:
        ev = ev.join(source, WINDOW_ID, "left")
        lacking = F.when(F.col("class") == "replay_only", F.col(f"replay_{cnt}")).otherwise(-F.col("count_delta"))
        # The splits whose rows in the window are exactly what the live output lacks; when several are (a window
        # of few rows), the one that is a candidate in the most windows.
        cands = F.transform(F.filter(F.map_entries(F.col("source_rows_by_split")), lambda e: e["value"] == lacking),
                            lambda e: e["key"])
        ev = ev.withColumn("_cands", cands).localCheckpoint(eager=True)
        best = (ev.select(F.explode("_cands").alias("s")).groupBy("s").count()
                .orderBy(F.col("count").desc(), "s").first())
        if best is not None and best["count"] >= 2:  # one split lacking across windows: only it is named
            pick = F.when(F.array_contains("_cands", best["s"]), F.lit(best["s"]))
        else:
            pick = F.when(F.size("_cands") == 1, F.col("_cands")[0])
        ev = ev.withColumn("missing_split", pick).drop("_cands")
    else:
        ev = ev.withColumn("source_rows", F.lit(None).cast("string")) \
            .withColumn("source_rows_by_split", F.lit(None).cast("map<string,bigint>")) \
            .withColumn("missing_split", F.lit(None).cast("string"))
    ev = ev.withColumn("explanation", _text(cfg, aggs, cnt, has, late_match is not None))
    ev = ev.localCheckpoint(eager=True)
    return Explained(windows=ev, hints=hints(ev, cfg, aggs, cnt, has, late_match), count_agg=cnt)


def _n(c: str) -> Column:
    return F.coalesce(F.col(c), F.lit(0))


def _rows(c: Column, verb: str | None = None) -> Column:
    """`1 row` / `3 rows`, with `was`/`were` after it when `verb` is "was"."""
    one, many = (" row was", " rows were") if verb == "was" else (" row", " rows")
    return F.concat(c.cast("string"), F.when(c == 1, F.lit(one)).otherwise(F.lit(many)))


def _text(cfg: JobConfig, aggs: Sequence[str], cnt: str | None, has: frozenset[str], live_late: bool) -> Column:
    cls = F.col("class")
    differs = cls == "value_differs"
    delta = F.col("count_delta")
    parts: list[Column] = []
    # Late rows on one side only.
    parts.append(F.when(_n("late_replay_only_n") > 0, F.concat(
        _rows(F.col("late_replay_only_n"), "was"), F.lit(" late in the replay only (the replay's watermark had "
                                                         "reached "), fmt_ms(F.col("replay_late_wm")),
        F.lit(" when they arrived) and counted by the live job: the live watermark was behind the replay's"))))
    parts.append(F.when(_n("late_live_only_n") > 0, F.concat(
        _rows(F.col("late_live_only_n"), "was"), F.lit(" late in the live job only, counted by the replay: the "
                                                       "live watermark had run ahead of the replay's"))))
    if not live_late and cnt is not None:
        all_late = (cls == "live_only") & (F.col(f"live_{cnt}") == F.col("replay_late_n"))
        parts.append(F.when(((differs & (delta == F.col("replay_late_n"))) | all_late)
                            & (F.col("replay_late_n") > 0), F.concat(
            F.lit("the live count is higher by exactly the "), _rows(F.col("replay_late_n")),
            F.lit(" the replay dropped as late (watermark "), fmt_ms(F.col("replay_late_wm")),
            F.lit("): the live job's watermark was behind the replay's when they arrived"))))
    parts.append(F.when((_n("late_replay_only_n") == 0) & (F.col("replay_late_n") > 0) & F.lit(live_late)
                        & differs, F.concat(
        F.lit("the replay dropped "), _rows(F.col("replay_late_n")), F.lit(" of this window as late (watermark "),
        fmt_ms(F.col("replay_late_wm")), F.lit("), and so did the live job"))))
    # A split the live job did not read.
    parts.append(F.when(F.col("missing_split").isNotNull(), F.concat(
        F.lit("the live output lacks exactly the rows of split "), F.col("missing_split"),
        F.lit(" in this window (source rows per split: "), F.col("source_rows"),
        F.lit("): the live job did not read split "), F.col("missing_split"))))
    # A changed aggregate: the rows agree but a value does not.
    if cnt is not None:
        others = [a for a in aggs if a != cnt]
        for a in others:
            parts.append(F.when(differs & F.col(f"eq_{cnt}") & ~F.col(f"eq_{a}") & (F.col("replay_late_n") == 0)
                                & (_n("late_replay_only_n") == 0) & (_n("late_live_only_n") == 0), F.concat(
                F.lit(f"the rows agree ({cnt} equal, no late row on either side) but {a} is "),
                F.col(f"live_{a}").cast("string"), F.lit(" live vs "), F.col(f"replay_{a}").cast("string"),
                F.lit(f" replayed: the live job computes {a} differently (a changed aggregate?)"))))
    # Every firing compared (the sink keeps updates): a different number of firings.
    lateness = _fmt_duration(cfg.window.allowed_lateness_ms)
    more = F.col("replay_firings") > F.col("live_versions")
    parts.append(F.when(differs & F.col("differing").contains("firings"), F.concat(
        F.lit("the replay fired it "), F.col("replay_firings").cast("string"), F.lit(" time(s), the live job "),
        F.col("live_versions").cast("string"), F.lit(" time(s): "),
        F.when(more, F.lit(f"rows that arrived after the replay's first firing re-fired it (allowed lateness "
                           f"{lateness}), while the live job fired it later with them already in: the live "
                           "watermark was behind the replay's"))
        .otherwise(F.lit(f"rows that arrived after the live job's first firing re-fired it there (allowed lateness "
                         f"{lateness}), while the replay fired it later with them already in: the live watermark was "
                         "ahead of the replay's")))))
    # Duplicates.
    parts.append(F.when(F.col("live_copies") > 0, F.concat(
        F.lit("the live output holds this window "), (F.col("live_rows")).cast("string"),
        F.lit(" times ("), F.col("live_copies").cast("string"),
        F.when(F.col("live_copies") == 1, F.lit(" extra copy")).otherwise(F.lit(" extra copies")),
        F.lit(" of the same firing): an at-least-once sink re-emitted it, e.g. after a restart"))))
    # Timing.
    if "fire_watermark" in has:
        parts.append(F.when(F.col("in_replay") & F.col("in_live") & F.col("live_fire_watermark_ms").isNotNull()
                            & ~F.col("live_fire_watermark_ms").eqNullSafe(F.col("replay_fire_watermark_ms")),
                            F.concat(F.lit("the live job fired it at watermark "),
                                     fmt_ms(F.col("live_fire_watermark_ms")), F.lit(", the replay at "),
                                     fmt_ms(F.col("replay_fire_watermark_ms")))))
    # Which split held the stream, idle spans.
    fired_at = F.concat(F.lit("the replay first fired it at watermark "), fmt_ms(F.col("replay_first_watermark_ms")),
                        F.lit(" (replay time "), fmt_ms(F.col("replay_fire_time_ms")), F.lit(")"))
    holder = (F.when(F.col("replay_first_reason") == "end_of_input",
                     F.lit("the replay fired it only at the end of input (flush): the live job had not fired it "
                           "yet when its output was taken, or ends with a hold"))
              .when(F.col("replay_first_reason") == "late_row",
                    F.lit("the replay opened it after its end had passed (a late firing on an allowed-late row)"))
              .when(F.col("held_by") == ALL_IDLE, F.concat(fired_at, F.lit(
                  " when every split was idle (the stream jumped to the largest watermark)")))
              .when(F.col("held_by").isNotNull(), F.concat(fired_at, F.lit(" when split "), F.col("held_by"),
                                                          F.lit(" held the stream"))))
    parts.append(F.when((cls != "duplicate") & F.col("in_replay"), holder))
    idle = cfg.watermark.idle_timeout_ms
    if idle:
        parts.append(F.when(F.col("idle_before").isNotNull() & (cls != "duplicate"), F.concat(
            F.lit("split(s) went idle just before, on the replay clock: "), F.col("idle_before"),
            F.lit(f" (idle timeout {_fmt_duration(idle)}); the replay fired this window after the idle timeout by "
                  "arrival time, the live job by its wall clock (between the timeout and the timeout + 3 intervals), "
                  "so the live job may have fired it at another point"))))
    parts.append(F.when((cls == "live_only") & (F.col("replay_late_n") == 0) & (_n("late_replay_only_n") == 0),
                        F.lit("the replay has no such window and no late row of it: rows the replay never read "
                              "(outside the replayed range or partitions, or another source)")))
    text = F.concat_ws("; ", *parts)
    return F.when(text == "", F.lit("no evidence in the replay's outputs explains it")).otherwise(text)


# -- hints: what the differences together suggest -------------------------------------------------------------

def hints(ev: DataFrame, cfg: JobConfig, aggs: Sequence[str], cnt: str | None, has: frozenset[str],
          late_match: DataFrame | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cls = F.col("class")
    is_diff = cls.isin("value_differs", "replay_only", "live_only")
    agg_cols = [F.count(F.lit(1)).alias("n"),
                F.sum((cls == "duplicate").cast("long")).alias("dups"),
                F.sum(((cls == "replay_only") & (F.col("replay_first_reason") == "end_of_input")).cast("long"))
                .alias("eoi_only"),
                F.sum((F.col("timing") == "other_watermark").cast("long")).alias("timing"),
                F.sum((is_diff & (F.col("idle_before").isNotNull() | (F.col("held_by") == ALL_IDLE)))
                      .cast("long")).alias("near_idle"),
                F.sum(is_diff.cast("long")).alias("differing"),
                F.min(F.when(cls == "duplicate", F.col("window_end_ms"))).alias("dup_lo"),
                F.max(F.when(cls == "duplicate", F.col("window_end_ms"))).alias("dup_hi"),
                F.sum(F.when(cls == "duplicate", F.col("live_copies"))).alias("dup_copies"),
                F.sum(_n("late_replay_only_n")).alias("lro"), F.sum(_n("late_live_only_n")).alias("llo"),
                F.sum((F.coalesce(F.col("differing"), F.lit("")).contains("firings")
                       & (F.col("replay_firings") > F.col("live_versions"))).cast("long")).alias("refired_replay"),
                F.sum((F.coalesce(F.col("differing"), F.lit("")).contains("firings")
                       & (F.col("replay_firings") < F.col("live_versions"))).cast("long")).alias("refired_live"),
                F.sum(F.when(F.col("count_delta") > 0, F.col("count_delta"))).alias("live_more"),
                F.sum(F.when(F.col("count_delta") < 0, -F.col("count_delta"))).alias("live_fewer"),
                F.sum(((cls == "live_only") & (F.col("replay_late_n") == 0)).cast("long")).alias("live_only_unread")]
    if cnt is not None:
        agg_cols += _changed_aggregate_aggs(aggs, cnt)
    r = ev.agg(*agg_cols).first()
    if r["dups"]:
        out.append({"kind": "duplicates", "windows": int(r["dups"]), "text": (
            f"{r['dups']} windows are in the live output more than once ({r['dup_copies']} extra copies of "
            f"identical firings), window ends {_utc(r['dup_lo'])} to {_utc(r['dup_hi'])}: an at-least-once sink "
            "re-emitted that span, e.g. after a restart from a checkpoint. Reported as duplicates, not differences.")})
    if late_match is not None:
        lt = late_match.agg(F.sum("replay_only").alias("ro"), F.sum("live_only").alias("lo"),
                            F.sum("matched").alias("m")).first()
        ro, lo = int(lt["ro"] or 0), int(lt["lo"] or 0)
    else:
        ro, lo = int(r["lro"] or 0), int(r["llo"] or 0)
    wm = cfg.watermark
    settings = (f"max out-of-orderness {_fmt_duration(wm.max_out_of_orderness_ms)}, idle timeout "
                f"{_fmt_duration(wm.idle_timeout_ms)}")
    if ro:
        out.append({"kind": "live_watermark_behind", "windows": None, "text": (
            f"{_plural(ro, 'row was', 'rows were')} late in the replay only: the live job still accepted "
            f"{'it' if ro == 1 else 'them'}, so its watermark was behind the replay's when "
            f"{'it' if ro == 1 else 'they'} arrived. The live job likely ran with a larger out-of-orderness or "
            f"idle timeout than the replay's ({settings}), or a split held its watermark longer. Rank candidate "
            "settings with `replay tune --against-live`.")})
    if lo:
        out.append({"kind": "live_watermark_ahead", "windows": None, "text": (
            f"{_plural(lo, 'row was', 'rows were')} late in the live job only: its watermark ran ahead of the "
            f"replay's. The live job likely ran with a smaller out-of-orderness or idle timeout than the replay's "
            f"({settings}), or did not wait for a split the replay waits for. Rank candidate settings with "
            "`replay tune --against-live`.")})
    if r["refired_replay"] or r["refired_live"]:
        rr, rl = int(r["refired_replay"] or 0), int(r["refired_live"] or 0)
        lean = ("behind" if rr >= rl else "ahead of")
        out.append({"kind": "refirings", "windows": rr + rl, "text": (
            f"{rr + rl} windows were fired a different number of times (the replay more often in {rr}, the live job "
            f"in {rl}): allowed-late rows re-fire a window in the job whose watermark passed it first, so the live "
            f"watermark was mostly {lean} the replay's.")})
    if late_match is None and cnt is not None and (r["live_more"] or 0) and not ro:
        out.append({"kind": "live_counts_higher", "windows": None, "text": (
            f"The live counts are higher by {r['live_more']} rows in all; without the live late output "
            "(--live-late) the replay can only say which of its own late rows those may be.")})
    differing = int(r["differing"] or 0)
    near = int(r["near_idle"] or 0)
    if differing and near and wm.idle_timeout_ms and near * 2 >= differing:
        out.append({"kind": "idleness", "windows": near, "text": (
            f"{near} of the {differing} differing windows were fired by the replay right after a split went idle "
            f"(idle timeout {_fmt_duration(wm.idle_timeout_ms)}): the idle timeout decides them. The replay detects "
            "idleness on the arrival-time clock, the live job on its wall clock; a different idle timeout in "
            "production is the first suspect (`replay tune --against-live --idle-timeout ...`).")})
    if cnt is not None and "source_rows_by_split" in ev.columns:
        split_hint = _missing_split_hint(ev)
        if split_hint:
            out.append(split_hint)
    if cnt is not None:
        out.extend(_changed_aggregate_hints(r, aggs, cnt))
    if r["eoi_only"]:
        out.append({"kind": "not_fired_live", "windows": int(r["eoi_only"]), "text": (
            f"{r['eoi_only']} windows are in the replay only and were fired by its end-of-input flush: the live job "
            "had not fired them yet when its output was taken (compare with `replay.end_of_input: hold`, or leave "
            "out the last partition).")})
    if r["live_only_unread"]:
        out.append({"kind": "live_only_unread", "windows": int(r["live_only_unread"]), "text": (
            f"{r['live_only_unread']} windows are in the live output only, and the replay has none of their rows, "
            "late or not: the live job read rows the replay did not (outside the replayed range or partitions, or "
            "another source).")})
    if r["timing"]:
        out.append({"kind": "timing", "windows": int(r["timing"]), "text": (
            f"{r['timing']} windows agree in value but the live job fired them at another watermark than the replay "
            "(informational: not a difference).")})
    return out


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _utc(ms: int | None) -> str:
    if ms is None:
        return "?"
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _missing_split_hint(ev: DataFrame) -> dict[str, Any] | None:
    """A split whose rows are exactly what the live output lacks, in (nearly) every window it has rows in. Windows
    whose missing rows the live late output holds are left out: those rows were read, and late (a live watermark
    ahead of the replay's, e.g. a shorter idle timeout), not unread."""
    read_late = F.coalesce(F.col("late_live_only_n"), F.lit(0)) > 0
    with_rows = ev.where(F.col("source_rows_by_split").isNotNull() & ~read_late).select(
        "missing_split", F.explode(F.map_keys("source_rows_by_split")).alias("split"))
    stats = with_rows.groupBy("split").agg(F.count(F.lit(1)).alias("with_rows"),
                                           F.sum((F.col("missing_split") == F.col("split")).cast("long"))
                                           .alias("explained")).collect()
    best = max(stats, key=lambda s: (s["explained"] or 0, s["split"]), default=None)
    if best is None or not best["explained"] or best["explained"] < 2:
        return None
    s = best["split"]
    return {"kind": "split_not_read", "windows": int(best["explained"]), "split": s, "text": (
        f"In {best['explained']} of the {best['with_rows']} windows with rows of split {s} that the live output "
        f"lacks rows of, what it lacks is exactly split {s}'s rows: the live job did not read split {s} (an input "
        "partition it never saw, or lost). Its watermark then never waited for that split either, which explains "
        "other differences around it.")}


def _rows_agree(cnt: str) -> Column:
    return ((F.col("class") == "value_differs") & F.col(f"eq_{cnt}") & (F.col("replay_late_n") == 0)
            & (_n("late_replay_only_n") == 0) & (_n("late_live_only_n") == 0))


def _changed_aggregate_aggs(aggs: Sequence[str], cnt: str) -> list[Column]:
    """Per aggregate other than the count, over the windows whose rows agree but whose value does not: how many,
    and the range of live/replay and live - replay (one pass with the other hint figures)."""
    out = []
    for i, a in enumerate(x for x in aggs if x != cnt):
        live, rep = F.col(f"live_{a}").try_cast("double"), F.col(f"replay_{a}").try_cast("double")
        sel = _rows_agree(cnt) & ~F.col(f"eq_{a}")
        ratio = F.when(sel & (rep != 0), live / rep)
        diff = F.when(sel, live - rep)
        out += [F.sum(sel.cast("long")).alias(f"ca{i}_n"), F.min(ratio).alias(f"ca{i}_rlo"),
                F.max(ratio).alias(f"ca{i}_rhi"), F.min(diff).alias(f"ca{i}_dlo"), F.max(diff).alias(f"ca{i}_dhi")]
    return out


def _changed_aggregate_hints(r, aggs: Sequence[str], cnt: str) -> list[dict[str, Any]]:
    out = []
    for i, a in enumerate(x for x in aggs if x != cnt):
        n, rlo, rhi, dlo, dhi = (r[f"ca{i}_{k}"] for k in ("n", "rlo", "rhi", "dlo", "dhi"))
        if not n:
            continue
        how = ""
        if rlo is not None and rhi is not None and abs(rhi - rlo) <= 1e-9 * max(1, abs(rhi)):
            how = f" In every one of them live {a} = {rlo:g} x replayed {a}."
        elif dlo is not None and dlo == dhi:
            how = f" In every one of them live {a} = replayed {a} {'+' if dlo >= 0 else '-'} {abs(dlo):g}."
        out.append({"kind": "changed_aggregate", "aggregate": a, "windows": int(n), "text": (
            f"{n} windows have the same rows on both sides ({cnt} equal, no late row on either side) but "
            f"another {a}: the live job computes {a} differently from the config's `{a}` (a changed aggregate)."
            + how)})
    return out
