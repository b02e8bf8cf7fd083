"""The figures of a grid's variants, as Spark aggregates of the engine's outputs: every variant in one plan keyed
by variant (its outputs side by side, each row with its variant's number), so the plan does not grow with the grid;
only one summary row per variant and a few per-split counts reach the driver.

Definitions (all times long ms; the replay clock is the arrival time, the range is [start, end)):

- rows: the clean rows in range; late_rows: the rows of the late output; late_share = late_rows / rows.
- firings: rows of the windows output; windows: distinct (key, window_start, window_end);
  windows_late_fired: windows with at least one firing caused by an allowed-late row (fire_reason late_row).
- The stream watermark V(t) on the replay clock: after each stream change of the watermarks output, the stream's
  value; while the stream is idle its value is kept (SEMANTICS §4: on going all-idle it first moves to the largest
  watermark any split has published, i.e. the running max of the split changes up to that time), so
  V = running max over the stream changes of (the change's watermark, or that split maximum for an idle change).
  Several changes at one replay time count as the last one.
- The newest event time N(t), as the watermarks output shows it: the highest watermark any split has published
  up to t (not idle, finite) plus the strategy's lag (WatermarkConfig.lag_ms: watermark = max_ts - lag), so the
  newest event time a split had seen when it last published. The why-report, which reads only the outputs, and
  the what-if table compute the lag with this one function (`watermark_lag_segments`): one figure on every page.
  With periodic emission a row's wait for the next tick is not counted (the same for every variant of an interval).
- The watermark lag at t is N(t) - V(t), time-weighted over the replay clock: both step functions change only at
  split and stream changes; the lag after a point t holds until the next point (the last until `end`).
  Only time where both are defined and V is finite counts (before the stream's first finite value, and after a
  flush to +inf, the lag is undefined). wm_lag_mean_ms = integral of the lag / counted time; wm_lag_p99_ms = the
  smallest L such that the lag is <= L during at least 99% of the counted time.
- First-firing delay of a window: (the replay time at which V first reached the fire_watermark of the window's
  firing 0) - window_end for a watermark firing; `end - window_end` for an end-of-input firing. A window whose
  firing 0 is a late_row firing (it opened after the watermark had passed its end) has no delay of its own (its
  firing time, the arrival of the row, is not an output) and is left out; first_fire_delay_windows counts those
  in the mean. The clocks are comparable because the replay clock is the arrival time (SEMANTICS §1).
- Late rows by cause: attribution.py (the split whose rows advanced the stream to the
  watermark the late row saw, or the all-idle jump); by split: the late row's own split.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Mapping, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..attribution import holders
from ..attribution import late_causes as causes
from ..semantics.config import JobConfig
from ..semantics.durations import NEG_INF, POS_INF
from .keyed import VARIANT, KeyedReplay
from .lag_points import lag_points
from .running import running_sum

P99_NUM, P99_DEN = 99, 100


def watermark_lag_segments(watermarks: DataFrame, lag_ms: int, end_ms: int) -> DataFrame:
    """(t, dur, lag) of the watermark lag (module doc) from a watermarks output (columns scope, split, idle,
    watermark, replay_time): the one definition the what-if table and the why-report use."""
    return lag_segments(lag_points(watermarks, lag_ms), end_ms)


def stream_values_of(points: DataFrame, by: Sequence[str] = ()) -> DataFrame:
    """(by..., t, v) of lag_points' stream changes."""
    return points.where(F.col("stream_change")).select(*by, "t", "v")


def lag_segments(points: DataFrame, end_ms: int, by: Sequence[str] = ()) -> DataFrame:
    """(by..., t, dur, lag) for every stretch of the replay clock where the lag is defined, from lag_points: the
    value in force at t holds until the next point (the last until `end_ms`)."""
    dur = F.coalesce(F.col("next_t"), F.lit(end_ms)) - F.col("t")
    n, v = F.col("newest"), F.col("v")
    ok = n.isNotNull() & v.isNotNull() & (v != F.lit(POS_INF)) & (v != F.lit(NEG_INF)) & (dur > 0)
    return points.where(ok).select(*by, "t", dur.alias("dur"), (n - v).alias("lag"))


def lag_summary(segments: DataFrame, by: Sequence[str] = ()) -> DataFrame:
    """One row (per `by` group with a segment), lazily: `time` (the ms where the lag is defined), `area` (the
    integral of the lag) and `p99` (module doc); lag_figures_of reads it."""
    big = "decimal(38,0)"  # exact: lag x duration can exceed a long on long histories
    dist = segments.groupBy(*by, "lag").agg(F.sum(F.col("dur").cast(big)).alias("d"))
    cum = running_sum(dist, "lag", "d", "cum", total="time", by=by)
    reached = F.col("cum") * F.lit(P99_DEN) >= F.col("time") * F.lit(P99_NUM)
    return cum.groupBy(*by).agg(F.max("time").alias("time"), F.sum(F.col("lag").cast(big) * F.col("d")).alias("area"),
                   F.min(F.when(reached, F.col("lag"))).alias("p99"))


def lag_figures_of(row: dict[str, Any] | None) -> tuple[float | None, int | None]:
    """(time-weighted mean, time-weighted p99) of the lag from lag_summary's row."""
    if not row or not row.get("time"):
        return None, None
    mean = float(Decimal(str(row["area"])) / Decimal(str(row["time"])))
    return mean, (int(row["p99"]) if row.get("p99") is not None else None)



def first_fire_delays(firings: DataFrame, values: DataFrame, end_ms: int, by: Sequence[str] = ()) -> DataFrame:
    """Per window (and `by`) whose firing 0 is a watermark or end-of-input firing: by..., key, window_start,
    window_end, delay (null if the fire watermark is not a value V reached, which the engine never produces)."""
    reached = values.groupBy(*by, "v").agg(F.min("t").alias("reached_at")).select(
        *[F.col(c).alias(f"_reached_{c}") for c in by], "v", "reached_at")
    first = firings.where((F.col("fire_index") == 0) & (F.col("fire_reason") != "late_row"))
    on = [F.col(c) == F.col(f"_reached_{c}") for c in by] + [F.col("fire_watermark") == F.col("v")]
    j = first.join(reached, on, "left")
    delay = (F.when(F.col("fire_reason") == "end_of_input", F.lit(end_ms) - F.col("window_end"))
             .otherwise(F.col("reached_at") - F.col("window_end")))
    return j.select(*by, "key", "window_start", "window_end", "fire_reason", delay.alias("delay"))


def late_cause_frame(late: DataFrame, watermarks: DataFrame, per_event: bool, by: Sequence[str] = ()) -> DataFrame:
    """why.py's cause analysis on the engine's frames, lazily: (by..., split, cause, rows)."""
    wm = watermarks.select(*by, "scope", "split", "idle", F.col("watermark").alias("watermark_ms"),
                           F.col("replay_time").alias("replay_time_ms"))
    lt = late.select(*by, F.col("split").cast("string").alias("split"), F.col("arrival_time").alias("arrival_ms"),
                     F.col("late_watermark").alias("late_watermark_ms"))
    return causes(lt, holders(wm, by), per_event, by)


def ranked(counts: dict[str, int]) -> str:
    """`p3 40, p0 2`: largest first, ties by name."""
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def per_variant(cfgs: Mapping[int, JobConfig], setting: Callable[[JobConfig], int]) -> Column:
    """A setting (a long) of each row's variant: one literal when the variants share it."""
    values = {i: F.lit(setting(c)).cast("long") for i, c in cfgs.items()}
    if len({setting(c) for c in cfgs.values()}) == 1:
        return next(iter(values.values()))
    col = None
    for i, v in values.items():
        mine = F.col(VARIANT) == i
        col = F.when(mine, v) if col is None else col.when(mine, v)
    return col


def variant_figure_frames(outputs: KeyedReplay, cfgs: Mapping[int, JobConfig], end_ms: int) -> dict[str, DataFrame]:
    """The small frames of the summary rows of the variants `cfgs` (number -> config), lazily, from their outputs
    side by side (keyed.KeyedReplay: each row with its variant's number): one plan for any number of variants,
    each frame with a row per variant (none for a variant without firings, lag or late rows), gathered in one
    Spark job with the runner's per-variant frames (variant_row reads them, split by by_variant)."""
    by = [VARIANT]
    windows, watermarks = outputs.windows, outputs.all_watermarks()
    # Read by the lag and the first-firing delays: cached (lazily) until engine.release.
    points = lag_points(watermarks, per_variant(cfgs, lambda c: c.watermark.lag_ms), by).cache()
    values = stream_values_of(points, by)
    window = ("key", "window_start", "window_end")
    per_event = not next(iter(cfgs.values())).watermark.periodic  # the grid never varies the emission
    # Without HAVING a window's firings are numbered 0, 1, ... (docs/semantics.md, "Firings"): its firing 0 counts
    # it, in the same pass as the firings; a distinct count would shuffle every firing's window (at 10M rows, 4
    # variants: 35 of the calibration's executor CPU s). HAVING may drop firing 0.
    distinct = (F.count_distinct(*window) if any(c.having is not None for c in cfgs.values())
                else F.count(F.when(F.col("fire_index") == 0, F.lit(1))))
    return {
        "firings": windows.groupBy(VARIANT).agg(F.count(F.lit(1)).alias("firings"), distinct.alias("windows")),
        "late_fired": (windows.where(F.col("fire_reason") == "late_row").select(VARIANT, *window).distinct()
                       .groupBy(VARIANT).agg(F.count(F.lit(1)).alias("n"))),
        "lag": lag_summary(lag_segments(points, end_ms, by), by),
        "delay": first_fire_delays(windows, values, end_ms, by).groupBy(VARIANT).agg(
            F.sum("delay").alias("s"), F.count("delay").alias("n")),
        "late_causes": late_cause_frame(outputs.late_events, watermarks, per_event, by),
    }


# A frame's row of a variant that has none there (grouped frames have no row for an empty group).
_NO_ROW = {"firings": {"firings": 0, "windows": 0}, "late_fired": {"n": 0}, "delay": {"s": None, "n": 0}}


def by_variant(found: dict[str, list[dict[str, Any]]]) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """Gathered frames keyed by variant (a VARIANT column in every row) split into each variant's own rows."""
    mine: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for name, rows in found.items():
        for r in rows:
            mine.setdefault(int(r[VARIANT]), {n: [] for n in found})[name].append(r)
    return mine


def variant_row(found: dict[str, list[dict[str, Any]]], cfg: JobConfig, clean_rows: int) -> dict[str, Any]:
    """The summary row of one variant from its own rows of the gathered frames (variant_figure_frames,
    by_variant)."""
    fir = (found.get("firings") or [_NO_ROW["firings"]])[0]
    d = (found.get("delay") or [_NO_ROW["delay"]])[0]
    late_fired = (found.get("late_fired") or [_NO_ROW["late_fired"]])[0]
    causes_ = sorted(({"split": r["split"], "cause": r["cause"], "rows": int(r["rows"])}
                      for r in found.get("late_causes", [])),
                     key=lambda r: (-r["rows"], str(r["split"]), str(r["cause"])))
    mean_lag, p99_lag = lag_figures_of((found.get("lag") or [None])[0])
    late_rows = sum(r["rows"] for r in causes_)
    by_cause: dict[str, int] = {}
    by_split: dict[str, int] = {}
    for r in causes_:
        by_cause[r["cause"]] = by_cause.get(r["cause"], 0) + r["rows"]
        by_split[r["split"]] = by_split.get(r["split"], 0) + r["rows"]
    w = cfg.watermark
    return {
        "variant": None,  # filled by the runner
        "max_out_of_orderness_ms": w.max_out_of_orderness_ms, "idle_timeout_ms": w.idle_timeout_ms,
        "allowed_lateness_ms": cfg.window.allowed_lateness_ms,
        "rows": clean_rows, "late_rows": late_rows,
        "late_share": (late_rows / clean_rows) if clean_rows else 0.0,
        "firings": int(fir["firings"]), "windows": int(fir["windows"]),
        "windows_late_fired": int(late_fired["n"]),
        "wm_lag_mean_ms": mean_lag, "wm_lag_p99_ms": p99_lag,
        "first_fire_delay_mean_ms": (float(d["s"]) / d["n"]) if d["n"] else None,
        "first_fire_delay_windows": int(d["n"]),
        "late_rows_by_cause": ranked(by_cause), "late_rows_by_split": ranked(by_split),
    }
