"""Run a what-if grid in one Spark application and write the table and the plot.

The source is read, quarantined and cut once; its clean rows are materialised (a local checkpoint) and every
variant replays them with its own config, so variants differ only in their settings: all of them in one pass keyed
by variant (keyed.py: one timeline table, one windows stage for the grid), else, where that pass does not apply,
one by one (engine.replay). The figures of the variants (and the per-variant hook's) are one plan keyed by variant
(figures.py), gathered in one Spark job (spark_jobs.gather): a grid is one job of figures and one plan, not one
per variant (replayed one by one: VARIANTS_PER_JOB variants a job, their outputs cached until then). The result
goes to `<output.path>/_tuning/<grid name>/` (see grid.Grid.name: no timestamp, the same grid replaces its
previous result), written to a staging folder first and renamed into place:
    tuning.parquet, tuning.csv, tuning.md, index.html (table + plot), late_share_vs_lag.png, tuning.json
(the grid, the definitions and the rows: what the why-report and the Airflow page read).
Output paths are local folders (the tables are a few rows, written by the driver).
"""
from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd

from .. import engine
from ..compare.checkpoint import freed, on_disk
from ..compare.matching import PLAN_SETTINGS
from ..io.scratch import scratch_space
from ..layout import TUNING_FOLDER, TUNING_JSON_FILE, TUNING_PLOT_FILE
from ..local_folder import replace_folder
from ..pipeline import WholeSource
from ..semantics.config import JobConfig
from ..spark_jobs import gather, one_job_plans, session_conf
from . import figures as fig
from . import running
from .calibrate import rank
from .figures import __doc__ as definitions
from .grid import Grid, Variant, grid_value
from .keyed import KeyedReplay, keyed_replay, side_by_side
from .table import html_table, markdown_table, ms_text

# Variants replayed one by one whose figures one Spark job gathers: enough for a calibration grid at once, few
# enough that their outputs, cached until then, stay small beside the rows.
VARIANTS_PER_JOB = 8
COLUMNS = ["variant", "max_out_of_orderness_ms", "idle_timeout_ms", "allowed_lateness_ms", "rows", "late_rows",
           "late_share", "windows_late_fired", "wm_lag_mean_ms", "wm_lag_p99_ms", "first_fire_delay_mean_ms",
           "first_fire_delay_windows", "firings", "windows", "late_rows_by_cause", "late_rows_by_split"]


@dataclass
class TuningResult:
    folder: Path
    rows: list[dict[str, Any]]
    seconds: float


def tuning_folder(cfg: JobConfig, grid: Grid) -> Path:
    return Path(cfg.output.path.rstrip("/"), TUNING_FOLDER, grid.name)


class PerVariant(Protocol):
    """More columns of a variant's row (calibrate.py: the agreement with the live output, `replay tune
    --against-live`): `frames` of a chunk's variants (number, engine result, config; and the same outputs side by
    side, keyed.KeyedReplay), keyed by variant and gathered with the variants' own figures, and the `row` they make
    for variant number i."""

    def frames(self, results: Sequence[tuple[int, Any, JobConfig]], outputs: KeyedReplay) -> dict[str, Any]: ...

    def row(self, found: dict[str, list[dict[str, Any]]], variant: int) -> dict[str, Any]: ...


def run_tuning(spark, cfg: JobConfig, grid: Grid, variants: Sequence[tuple[Variant, JobConfig]],
               log: Callable[[str], None] = print, per_variant: PerVariant | None = None) -> TuningResult:
    """Replay every variant over the source read once; write the table and the plot; return the rows.
    `per_variant`: more columns of each variant's row (PerVariant)."""
    t0 = time.monotonic()
    # The checkpoints of the grid (its rows, the keyed outputs, the live side's) go when it ends: the steps after
    # it may share the session (`replay compare`'s settings search, bench/report_steps.py).
    with scratch_space(spark, str(tuning_folder(cfg, grid))), freed():
        whole = WholeSource()  # the whole source's read and clock; each variant is replayed on its own below
        source = whole.read(spark, cfg, None)
        try:
            clock = whole.clock(source)
            # Materialised once for every variant (and independent of the session's Dataset cache, which
            # engine.release clears after each chunk of variants).
            # On disk only, as the comparison's checkpoints (compare/checkpoint.py: at 10M rows a heap-held one
            # is unrolled as row objects until the heap is full).
            rows = on_disk(source.rows, eager=True)
            keyed = keyed_replay(spark, rows, [vcfg for _, vcfg in variants], source.splits, clock,
                                 source.tick_partials)
            if keyed is not None:
                # Read by the figures and by the hook: computed once, and kept outside the session's cache
                # (engine.release clears it after the figures).
                keyed.windows = on_disk(keyed.windows)
                keyed.late_events = on_disk(keyed.late_events)

            numbered = list(enumerate(variants))  # variant i: the keyed pass's number too
            # The keyed pass's figures are one plan whatever the number of variants: one chunk. Replayed one by
            # one, each variant's outputs stay cached until its chunk's figures are in: chunks bound that.
            per_job = len(numbered) if keyed is not None else VARIANTS_PER_JOB
            table = []
            for chunk in _chunks(numbered, max(per_job, 1)):
                table += _replay_chunk(spark, keyed, rows, source, clock, chunk, len(variants), per_variant, log)
        finally:
            source.release()
    folder = tuning_folder(cfg, grid)
    write_result(folder, cfg, grid, table, source_info={"rows_read": source.rows_read, "rows": source.clean_rows,
                                                        "start_ms": clock.start_ms, "end_ms": clock.end_ms,
                                                        "splits": list(source.splits)})
    return TuningResult(folder=folder, rows=table, seconds=time.monotonic() - t0)


def _chunks(items: list, n: int) -> list[list]:
    return [items[i:i + n] for i in range(0, len(items), n)]


def _replay_chunk(spark, keyed: KeyedReplay | None, rows, source, clock,
                  chunk: list[tuple[int, tuple[Variant, JobConfig]]], total: int, per_variant: "PerVariant | None",
                  log: Callable[[str], None]) -> list[dict[str, Any]]:
    """The chunk's variants' engine results (the keyed pass's, else each replayed on its own), then all their
    figures (and the hook's) gathered in one Spark job: the figures of every variant of the chunk are one plan
    keyed by variant (figures.variant_figure_frames), whose planning does not grow with the variants. Outputs
    replayed one by one stay cached until the chunk's figures are in."""
    t1 = time.monotonic()
    cfgs = {i: vcfg for i, (_, vcfg) in chunk}
    try:
        if keyed is not None:
            results = {i: keyed.result(i) for i in cfgs}
            outputs = keyed
        else:
            results = {i: engine.replay(spark, rows, vcfg, source.splits, clock)[0] for i, vcfg in cfgs.items()}
            for r in results.values():  # read by the figures and by the hook (calibrate.py matches the firings)
                r.windows, r.watermarks = r.windows.cache(), r.watermarks.cache()
            outputs = side_by_side(results)
        # the frames are planned (and cached) here; the calibration's match as the comparison plans it
        match_plans = PLAN_SETTINGS if per_variant is not None else {}
        with one_job_plans(spark), session_conf(spark, match_plans):
            frames = {f"figures:{k}": f for k, f in fig.variant_figure_frames(outputs, cfgs, clock.end_ms).items()}
            if per_variant is not None:
                hook = per_variant.frames([(i, results[i], vcfg) for i, vcfg in cfgs.items()], outputs)
                frames.update({f"hook:{k}": f for k, f in hook.items()})
            found = gather(frames)
    finally:
        engine.release(spark)
        running.release()
    seconds = time.monotonic() - t1
    figures = fig.by_variant({k.split(":", 1)[1]: v for k, v in found.items() if k.startswith("figures:")})
    hook_found = {k.split(":", 1)[1]: v for k, v in found.items() if k.startswith("hook:")}
    table = []
    for i, (variant, vcfg) in chunk:
        row = fig.variant_row(figures.get(i, {}), vcfg, source.clean_rows)
        if per_variant is not None:
            row.update(per_variant.row(hook_found, i))
        row["variant"] = variant.name
        table.append(row)
        log(f"tune: {i + 1}/{total} {variant.name}: late rows {row['late_rows']} ({row['late_share']:.2%}), "
            f"mean watermark lag {ms_text(row['wm_lag_mean_ms'])} ({len(chunk)} variants in {seconds:.1f} s)")
    return table


def plot(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Late share (%) against the mean watermark lag (s): one labelled point per variant."""
    matplotlib.use("Agg")

    fig_, ax = plt.subplots(figsize=(9, 6), dpi=100)
    idles = sorted({r["idle_timeout_ms"] for r in rows}, key=lambda v: (v is not None, v or 0))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, idle in enumerate(idles):
        pts = [r for r in rows if r["idle_timeout_ms"] == idle and r["wm_lag_mean_ms"] is not None]
        ax.scatter([r["wm_lag_mean_ms"] / 1000 for r in pts], [100 * r["late_share"] for r in pts],
                   color=colours[k % len(colours)], label=f"idle timeout {grid_value(idle)}", zorder=3)
        for j, r in enumerate(pts):  # alternate above/below so that neighbours' labels do not overprint
            ax.annotate(f"{grid_value(r['max_out_of_orderness_ms'])}/{grid_value(r['allowed_lateness_ms'])}",
                        (r["wm_lag_mean_ms"] / 1000, 100 * r["late_share"]), textcoords="offset points",
                        xytext=(5, 5 if j % 2 == 0 else -12), fontsize=8)
    lags = [r["wm_lag_mean_ms"] for r in rows if r["wm_lag_mean_ms"] is not None]
    log_x = bool(lags) and min(lags) > 0 and max(lags) / min(lags) > 20  # lags often span orders of magnitude
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("mean watermark lag behind the newest event time (s, time-weighted on the replay clock"
                  + (", log scale)" if log_x else ")"))
    ax.set_ylabel("late rows (% of rows)")
    ax.set_title("What-if: late share vs watermark lag (labels: delay/allowed lateness)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig_.tight_layout()
    fig_.savefig(path, dpi=100)
    plt.close(fig_)


def write_result(folder: Path, cfg: JobConfig, grid: Grid, rows: list[dict[str, Any]],
                 source_info: dict[str, Any]) -> None:
    """All files to a staging folder next to `folder`, then swapped in by renames."""
    if any("live_score" in r for r in rows):  # --against-live: every variant's rank before the tables are written

        rank(rows)

    def fill(staging: Path) -> None:
        extra = [c for c in (rows[0] if rows else {}) if c not in COLUMNS]  # e.g. calibrate.py's columns
        df = pd.DataFrame(rows, columns=COLUMNS + extra).astype({"idle_timeout_ms": "Int64",
                                                                 "wm_lag_p99_ms": "Int64"})
        df.to_parquet(staging / "tuning.parquet", index=False)
        df.to_csv(staging / "tuning.csv", index=False)
        md = markdown_table(rows)
        (staging / "tuning.md").write_text(f"# What-if tuning: {grid.name}\n\n{md}\n")
        plot(staging / TUNING_PLOT_FILE, rows)

        doc = {"grid": {"max_out_of_orderness_ms": list(grid.delays_ms),
                        "idle_timeout_ms": list(grid.idle_timeouts_ms),
                        "allowed_lateness_ms": list(grid.lateness_ms)},
               "name": grid.name, "source": source_info, "source_path": cfg.source.path,
               "output_path": cfg.output.path, "columns": COLUMNS + extra, "rows": rows, "plot": TUNING_PLOT_FILE,
               "definitions": definitions}
        (staging / TUNING_JSON_FILE).write_text(json.dumps(doc, indent=2, default=str) + "\n")
        (staging / "index.html").write_text(
            f"""<!doctype html><html><head><meta charset="utf-8"><title>What-if tuning</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}</style></head><body>
<h1>What-if tuning</h1><p>Source <code>{html.escape(cfg.source.path)}</code>, {source_info['rows']} rows,
grid <code>{html.escape(grid.name)}</code>. Each variant replays the same input; definitions in
<a href="{TUNING_JSON_FILE}">{TUNING_JSON_FILE}</a>, all columns in <a href="tuning.csv">tuning.csv</a>.</p>
{html_table(rows)}<img src="{TUNING_PLOT_FILE}" alt="late share vs watermark lag"></body></html>
""")

    replace_folder(folder, fill)
