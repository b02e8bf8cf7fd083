"""What the differences together suggest, from aggregates of the explained windows (driver side): the live
watermark behind or ahead of the replay's, re-firings, windows the live job had not fired yet, a split never read
(split_read.py), a changed aggregate (changed_aggregate.py), duplicates from a re-emitted span, and the timing notes.
Which setting differs is diagnosis.py's, and these hints come after its."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..attribution import ALL_IDLE
from ..semantics.config import JobConfig
from .changed_aggregate import changed_aggregate_aggs, changed_aggregate_hints
from ..spark_jobs import gather
from .split_read import missing_split_hint, missing_split_stats
from .wording import fmt_duration, n_or_0, plural, utc


def hints(ev: DataFrame, cfg: JobConfig, aggs: Sequence[str], cnt: str | None, has: frozenset[str],
          late_match: DataFrame | None) -> list[dict[str, Any]]:
    """The hints, their figures in one Spark job."""
    return hints_from(gather(hint_frames(ev, aggs, cnt, late_match)), cfg, aggs, cnt)


def hint_frames(ev: DataFrame, aggs: Sequence[str], cnt: str | None, late_match: DataFrame | None
                ) -> dict[str, DataFrame]:
    """The hints' figures: small frames, to gather (with others) in one Spark job."""
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
                F.sum(n_or_0("late_replay_only_n")).alias("lro"), F.sum(n_or_0("late_live_only_n")).alias("llo"),
                F.sum((F.coalesce(F.col("differing"), F.lit("")).contains("firings")
                       & (F.col("replay_firings") > F.col("live_versions"))).cast("long")).alias("refired_replay"),
                F.sum((F.coalesce(F.col("differing"), F.lit("")).contains("firings")
                       & (F.col("replay_firings") < F.col("live_versions"))).cast("long")).alias("refired_live"),
                F.sum(F.when(F.col("count_delta") > 0, F.col("count_delta"))).alias("live_more"),
                F.sum(F.when(F.col("count_delta") < 0, -F.col("count_delta"))).alias("live_fewer"),
                F.sum(((cls == "live_only") & (F.col("replay_late_n") == 0)).cast("long")).alias("live_only_unread")]
    if cnt is not None:
        agg_cols += changed_aggregate_aggs(aggs, cnt)
    frames = {"figures": ev.agg(*agg_cols)}
    if late_match is not None:
        frames["late"] = late_match.agg(F.sum("replay_only").alias("ro"), F.sum("live_only").alias("lo"),
                                        F.sum("matched").alias("m"))
    if cnt is not None and "source_rows_by_split" in ev.columns:
        frames["splits"] = missing_split_stats(ev)
    return frames


def hints_from(found: Mapping[str, list[dict[str, Any]]], cfg: JobConfig, aggs: Sequence[str], cnt: str | None
               ) -> list[dict[str, Any]]:
    """The hints from the gathered rows of hint_frames."""
    out: list[dict[str, Any]] = []
    r = found["figures"][0]
    if r["dups"]:
        out.append({"kind": "duplicates", "windows": int(r["dups"]), "text": (
            f"{r['dups']} windows are in the live output more than once ({r['dup_copies']} extra copies of "
            f"identical firings), window ends {utc(r['dup_lo'])} to {utc(r['dup_hi'])}: an at-least-once sink "
            "re-emitted that span, e.g. after a restart from a checkpoint. Reported as duplicates, not differences.")})
    late_match = found.get("late")  # the live late output's figures, when it was given
    if late_match is not None:
        lt = late_match[0]
        ro, lo = int(lt["ro"] or 0), int(lt["lo"] or 0)
    else:
        ro, lo = int(r["lro"] or 0), int(r["llo"] or 0)
    wm = cfg.watermark
    settings = (f"max out-of-orderness {fmt_duration(wm.max_out_of_orderness_ms)}, idle timeout "
                f"{fmt_duration(wm.idle_timeout_ms)}")
    if ro:
        out.append({"kind": "live_watermark_behind", "windows": None, "text": (
            f"{plural(ro, 'row was', 'rows were')} late in the replay only: the live job still accepted "
            f"{'it' if ro == 1 else 'them'}, so its watermark was behind the replay's when "
            f"{'it' if ro == 1 else 'they'} arrived. The live job likely ran with a larger out-of-orderness or "
            f"idle timeout than the replay's ({settings}), or a split held its watermark longer. Rank candidate "
            "settings with `replay tune --against-live`.")})
    if lo:
        out.append({"kind": "live_watermark_ahead", "windows": None, "text": (
            f"{plural(lo, 'row was', 'rows were')} late in the live job only: its watermark ran ahead of the "
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
            f"(idle timeout {fmt_duration(wm.idle_timeout_ms)}): the idle timeout decides them. The replay detects "
            "idleness on the arrival-time clock, the live job on its wall clock; a different idle timeout in "
            "production is the first suspect (`replay tune --against-live --idle-timeout ...`).")})
    if "splits" in found:
        split_hint = missing_split_hint(found["splits"])
        if split_hint:
            out.append(split_hint)
    if cnt is not None:
        out.extend(changed_aggregate_hints(r, aggs, cnt))
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
