"""Each differing window's `explanation`: one sentence per finding of its evidence (evidence.py, split_read.py),
built by Spark expressions, so no row goes to the driver."""
from __future__ import annotations

from typing import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..attribution import ALL_IDLE
from ..semantics.config import JobConfig
from .wording import fmt_duration, fmt_ms, n_or_0, rows_text


def explanation(cfg: JobConfig, aggs: Sequence[str], cnt: str | None, has: frozenset[str], live_late: bool) -> Column:
    cls = F.col("class")
    differs = cls == "value_differs"
    delta = F.col("count_delta")
    parts: list[Column] = []
    # Late rows on one side only.
    parts.append(F.when(n_or_0("late_replay_only_n") > 0, F.concat(
        rows_text(F.col("late_replay_only_n"), "was"), F.lit(" late in the replay only (the replay's watermark had "
                                                         "reached "), fmt_ms(F.col("replay_late_wm")),
        F.lit(" when they arrived) and counted by the live job: the live watermark was behind the replay's"))))
    parts.append(F.when(n_or_0("late_live_only_n") > 0, F.concat(
        rows_text(F.col("late_live_only_n"), "was"), F.lit(" late in the live job only, counted by the replay: the "
                                                       "live watermark had run ahead of the replay's"))))
    if not live_late and cnt is not None:
        all_late = (cls == "live_only") & (F.col(f"live_{cnt}") == F.col("replay_late_n"))
        parts.append(F.when(((differs & (delta == F.col("replay_late_n"))) | all_late)
                            & (F.col("replay_late_n") > 0), F.concat(
            F.lit("the live count is higher by exactly the "), rows_text(F.col("replay_late_n")),
            F.lit(" the replay dropped as late (watermark "), fmt_ms(F.col("replay_late_wm")),
            F.lit("): the live job's watermark was behind the replay's when they arrived"))))
    parts.append(F.when((n_or_0("late_replay_only_n") == 0) & (F.col("replay_late_n") > 0) & F.lit(live_late)
                        & differs, F.concat(
        F.lit("the replay dropped "), rows_text(F.col("replay_late_n")), F.lit(" of this window as late (watermark "),
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
                                & (n_or_0("late_replay_only_n") == 0) & (n_or_0("late_live_only_n") == 0), F.concat(
                F.lit(f"the rows agree ({cnt} equal, no late row on either side) but {a} is "),
                F.col(f"live_{a}").cast("string"), F.lit(" live vs "), F.col(f"replay_{a}").cast("string"),
                F.lit(f" replayed: the live job computes {a} differently (a changed aggregate?)"))))
    # Every firing compared (the sink keeps updates): a different number of firings.
    lateness = fmt_duration(cfg.window.allowed_lateness_ms)
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
            F.lit(f" (idle timeout {fmt_duration(idle)}); the replay fired this window after the idle timeout by "
                  "arrival time, the live job by its wall clock (between the timeout and the timeout + 3 intervals), "
                  "so the live job may have fired it at another point"))))
    parts.append(F.when((cls == "live_only") & (F.col("replay_late_n") == 0) & (n_or_0("late_replay_only_n") == 0),
                        F.lit("the replay has no such window and no late row of it: rows the replay never read "
                              "(outside the replayed range or partitions, or another source)")))
    text = F.concat_ws("; ", *parts)
    return F.when(text == "", F.lit("no evidence in the replay's outputs explains it")).otherwise(text)
