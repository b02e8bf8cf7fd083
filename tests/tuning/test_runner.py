"""What-if tuning's runner (tuning/runner.py; the grid itself: test_grid.py; `python -m event_replay.tune_job`:
tests/test_tune_job.py; the DAG's logic: tests/orchestration/test_tuning.py): every
variant's figures equal those recomputed (in pandas, from the definitions) from a separate `replay run` with that
variant's config, the files are written, and (on the reference model) more delay or more allowed lateness never
gives more late rows."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings

from event_replay.semantics.config import parse_config
from event_replay.semantics.durations import NEG_INF, POS_INF
from event_replay.tuning import parse_grid
from strategies import cases

ROOT = Path(__file__).resolve().parents[2]


def _cfg(source: str, out: str, **watermark):
    return parse_config({
        "source": {"path": source}, "window": {"type": "tumbling", "size": "2s", "allowed_lateness": "500ms"},
        "watermark": {"max_out_of_orderness": "200ms", "interval": "200ms", **watermark},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)"}, "output": {"path": out}})


# -- the figures against a separate replay run -----------------------------------------------------------------------

def _ms(s: pd.Series) -> pd.Series:
    """Timestamps (any unit) or longs as epoch ms; NaT stays missing."""
    if pd.api.types.is_datetime64_any_dtype(s):
        epoch = pd.Timestamp(0, tz="UTC") if s.dt.tz is not None else pd.Timestamp(0)
        return ((s - epoch) // pd.Timedelta(1, "ms")).astype("Int64")
    return s.astype("Int64")


def expected_figures(out: Path, source: pd.DataFrame, lag_ms: int) -> dict:
    """The figures of figures.py's docstring, from a run's written outputs and the source, by plain loops."""
    win, late, wm = (pd.read_parquet(out / d, dtype_backend="numpy_nullable")  # exact longs (+inf) with nulls
                     for d in ("windows", "late_events", "watermarks"))
    arrival = _ms(source["arrival_time"])
    rows, end = len(source), int(arrival.max())  # no explicit range: every row, end = the last arrival

    # V(t): the stream's value after the changes at t (split changes at a time come before the stream's).
    v_at: dict[int, int] = {}
    smax, v = None, None
    for r in wm.itertuples():  # written in occurrence order: time, then scope (split < stream)
        w = None if pd.isna(r.watermark_ms) else int(r.watermark_ms)
        if r.scope == "split" and not r.idle:
            smax = w if smax is None else max(smax, w)
        elif r.scope == "stream":
            e = smax if r.idle else w
            if e is not None:
                v = e if v is None else max(v, e)
            if v is not None:
                v_at[int(r.replay_time_ms)] = v
    # N(t): the highest finite watermark the splits published up to t, plus the strategy's lag (watermark = max_ts - lag_ms).
    newest_at: dict[int, int] = {}
    top = None
    for r in wm.itertuples():
        w = None if pd.isna(r.watermark_ms) else int(r.watermark_ms)
        if r.scope == "split" and not r.idle and w is not None and w not in (NEG_INF, POS_INF):
            top = w + lag_ms if top is None else max(top, w + lag_ms)
            newest_at[int(r.replay_time_ms)] = top
    times = sorted(set(v_at) | set(newest_at))
    segs, cur_n, cur_v = [], None, None
    for i, t in enumerate(times):
        cur_n, cur_v = newest_at.get(t, cur_n), v_at.get(t, cur_v)
        dur = (times[i + 1] if i + 1 < len(times) else end) - t
        if cur_n is not None and cur_v is not None and cur_v not in (NEG_INF, POS_INF) and dur > 0:
            segs.append((cur_n - cur_v, dur))
    total = sum(d for _, d in segs)
    mean = sum(lag * d for lag, d in segs) / total if total else None
    acc, p99 = 0, None
    for lag, d in sorted(segs):
        acc += d
        if 100 * acc >= 99 * total:
            p99 = lag
            break

    first = win[win.fire_index == 0]
    delays = []
    for r in first.itertuples():
        w_end = int(_ms(pd.Series([r.window_end])).iloc[0])
        if r.fire_reason == "end_of_input":
            delays.append(end - w_end)
        elif r.fire_reason == "watermark":
            fw = int(_ms(pd.Series([r.fire_watermark])).iloc[0])
            delays.append(min(t for t, val in v_at.items() if val >= fw) - w_end)
    keys = ["key", "window_start", "window_end"]
    return {"rows": rows, "late_rows": len(late), "late_share": len(late) / rows, "firings": len(win),
            "windows": len(win[keys].drop_duplicates()),
            "windows_late_fired": len(win.loc[win.fire_reason == "late_row", keys].drop_duplicates()),
            "wm_lag_mean_ms": mean, "wm_lag_p99_ms": p99,
            "first_fire_delay_mean_ms": sum(delays) / len(delays) if delays else None,
            "first_fire_delay_windows": len(delays),
            "late_split_counts": late["split"].value_counts().to_dict()}


def test_each_variant_equals_a_separate_replay_run(spark, tmp_path):
    from event_replay.job import run_replay
    from event_replay.quality.prepare import late_events_batch, read_outputs, watermarks_batch
    from event_replay.attribution import holders, late_causes
    from event_replay.samples.log import SampleSpec, write_sample
    from event_replay.tuning.figures import ranked
    from event_replay.layout import TUNING_PLOT_FILE
    from event_replay.tuning.results import read_results
    from event_replay.tuning.runner import run_tuning

    src = tmp_path / "log"
    # 3 splits, the last falling silent: idleness matters; stragglers: late rows whatever the delay.
    write_sample(str(src), SampleSpec(rows=500, splits=3, seed=11, keys=3, rate=25.0, files=2,
                                      straggler_fraction=0.04))
    cfg = _cfg(str(src), str(tmp_path / "out"), idle_timeout="1s")
    grid, every = parse_grid(cfg, "2s,100ms", "1s,none", "500ms,0")
    # Two variants that differ in all three settings (each is a separate run too: the test stays small).
    variants = [every[2], every[5]]
    assert [v.name for v, _ in variants] == ["delay 100ms, idle 1s, lateness 0ms",
                                             "delay 2s, idle none, lateness 500ms"]

    def on_disk_only():  # the grid's checkpoints (compare/checkpoint.on_disk), not the engine's own small ones
        return {k for k, rdd in spark.sparkContext._jsc.getPersistentRDDs().items()
                if not rdd.getStorageLevel().useMemory()}

    before = on_disk_only()
    result = run_tuning(spark, cfg, grid, variants, log=lambda m: None)
    assert on_disk_only() <= before  # its checkpoints (rows, keyed outputs) go with it: later steps share the session
    assert result.folder == tmp_path / "out" / "_tuning" / "delay_100ms-2s__idle_none-1s__lateness_0ms-500ms"
    assert [r["variant"] for r in result.rows] == [v.name for v, _ in variants]  # sorted, not as typed
    source = pd.read_parquet(src)
    # Each variant against its own replay run: both replayed and figured in one plan, so nothing of one may leak
    # into the other.
    for i, ((variant, vcfg), row) in enumerate(zip(variants, result.rows)):
        run_cfg = vcfg.with_overrides(output={"path": str(tmp_path / f"run-{i}")})
        summary = run_replay(spark, run_cfg)
        out = Path(run_cfg.output.path)
        exp = expected_figures(out, source, run_cfg.watermark.lag_ms)
        assert summary.late_rows == row["late_rows"] == exp["late_rows"], variant
        for k in ("rows", "late_rows", "firings", "windows", "windows_late_fired", "wm_lag_p99_ms",
                  "first_fire_delay_windows"):
            assert row[k] == exp[k], (variant, k, row[k], exp[k])
        for k in ("late_share", "wm_lag_mean_ms", "first_fire_delay_mean_ms"):
            assert row[k] == pytest.approx(exp[k], rel=1e-12), (variant, k, row[k], exp[k])
        # every window's first firing got a delay (no fire watermark the stream never reached)
        assert exp["first_fire_delay_windows"] == len(pd.read_parquet(out / "windows").query(
            "fire_index == 0 and fire_reason != 'late_row'"))
        assert row["late_rows_by_split"] == ranked(exp["late_split_counts"])
        frames = read_outputs(spark, str(out))
        wm = watermarks_batch(frames["watermarks"])
        causes = late_causes(late_events_batch(frames["late_events"], run_cfg), holders(wm), False).collect()
        by_cause: dict = {}
        for r in causes:
            by_cause[r["cause"]] = by_cause.get(r["cause"], 0) + r["rows"]
        assert row["late_rows_by_cause"] == ranked(by_cause), variant
    # The trade-off the tool is for: more delay and lateness, no idleness: fewer late rows, a longer lag.
    small, big = result.rows
    assert (small["max_out_of_orderness_ms"], big["max_out_of_orderness_ms"]) == (100, 2000)
    assert big["late_rows"] < small["late_rows"] and big["wm_lag_mean_ms"] > small["wm_lag_mean_ms"]

    files = sorted(p.name for p in result.folder.iterdir())
    assert files == sorted(["index.html", TUNING_PLOT_FILE, "tuning.csv", "tuning.json", "tuning.md", "tuning.parquet"])
    assert not [p for p in result.folder.parent.iterdir() if p.name.startswith(".")]  # no staging left
    table = pd.read_parquet(result.folder / "tuning.parquet")
    assert table["late_rows"].tolist() == [r["late_rows"] for r in result.rows]
    assert pd.read_csv(result.folder / "tuning.csv")["variant"].tolist() == [r["variant"] for r in result.rows]
    import matplotlib.image
    assert matplotlib.image.imread(result.folder / TUNING_PLOT_FILE).shape[:2] == (600, 900)
    md = (result.folder / "tuning.md").read_text()
    assert all(r["variant"] in md for r in result.rows)
    doc = read_results(tmp_path / "out")
    assert [d["name"] for d in doc] == [grid.name] and json.loads((result.folder / "tuning.json").read_text())["rows"]


# -- the property, on the reference model ----------------------------------------------------------------------------

@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=cases(max_rows=100))
def test_more_delay_or_lateness_never_gives_more_late_rows(case):
    from event_replay.semantics.reference import replay

    cfg = case.cfg
    assume(cfg.watermark.strategy != "monotonous")  # no delay to vary

    def late(c) -> int:
        return len(replay(case.rows, c, declared_splits=case.declared_splits).late_rows)

    base = late(cfg)
    d, lat = cfg.watermark.max_out_of_orderness_ms, cfg.window.allowed_lateness_ms
    for extra in (1, 400, 5000):
        assert late(cfg.with_overrides(watermark={"max_out_of_orderness": d + extra})) <= base
        assert late(cfg.with_overrides(window={"allowed_lateness": lat + extra})) <= base


def test_variants_in_one_plan_equal_each_replayed_and_figured_alone(spark, tmp_path, monkeypatch):
    """The runner replays a grid's variants in one keyed pass and computes all their figures (and their agreement
    with live, calibrate.py) in one plan keyed by variant: each variant's row, every column of tuning.json and
    calibration.json, equals its row when it is replayed on its own (engine.replay) and its figures gathered alone,
    for variants that differ in all three settings over a log with an idle split and late rows (two of the four
    alone: tests/tuning/test_keyed.py checks all four against separate replays). The grid's Spark jobs do not
    grow with its variants."""
    from event_replay.job import run_replay
    from event_replay.compare.live_spec import LiveSpec
    from event_replay.samples.log import SampleSpec, write_sample
    from event_replay.spark_jobs import counted
    from event_replay.tuning import calibrate, runner

    write_sample(str(tmp_path / "log"), SampleSpec(rows=300, splits=3, seed=5, keys=3, rate=25.0, files=2,
                                                   straggler_fraction=0.05))
    cfg = _cfg(str(tmp_path / "log"), str(tmp_path / "out"), idle_timeout="1s")
    run_replay(spark, cfg.with_overrides(output={"path": str(tmp_path / "live")}))  # the live output
    spec = LiveSpec(path=str(tmp_path / "live" / "windows"), late_path=str(tmp_path / "live" / "late_events"),
                    keeps_updates=True)
    grid, every = parse_grid(cfg, "100ms,2s", "none,1s", "0,500ms")
    # Four of the eight: each pair differs in all three settings.
    variants = [(v, c) for v, c in every if (v.max_out_of_orderness_ms == 100) == (v.allowed_lateness_ms == 0)]

    def tune(chosen):
        with counted(spark, "grid") as jobs:
            rows = runner.run_tuning(spark, cfg, grid, chosen, log=lambda m: None,
                                     per_variant=calibrate.per_variant(spark, cfg, spec)).rows
        return rows, jobs.jobs

    together, jobs = tune(variants)
    # Two variants (that differ in all three settings) or four: the same Spark jobs (with the same two allowed
    # latenesses: keyed.py takes one windows stage per lateness).
    two = [variants[0], variants[-1]]
    assert jobs == tune(two)[1]
    monkeypatch.setattr(runner, "keyed_replay", lambda *a, **k: None)  # every variant replayed on its own
    monkeypatch.setattr(runner, "VARIANTS_PER_JOB", 1)  # and its figures gathered alone
    alone, _ = tune(two)

    def unranked(rows):  # the rank is among the grid's variants: two rank otherwise than four
        return [{k: v for k, v in r.items() if k != "live_rank"} for r in rows]

    assert len(together) == 4 and unranked([together[0], together[-1]]) == unranked(alone)
    assert set(runner.COLUMNS + calibrate.COLUMNS) <= set(together[0])  # every column compared
    # The variants do differ, in lag, late rows and their causes, and in agreement with live.
    assert len({(r["wm_lag_mean_ms"], r["late_rows"]) for r in together}) == 4
    assert len({r["late_rows_by_cause"] for r in together}) > 1 and max(r["late_rows"] for r in together) > 0
    assert len({r["live_score"] for r in together}) > 1
