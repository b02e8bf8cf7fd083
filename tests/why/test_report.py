"""The why-report: files, a real PNG of the documented size, numbers that match the outputs, the attributions of
the seed vectors B (an idle split let p0 run ahead) and C (the all-idle jump) of docs/semantics.md, and the
timelines of a sparse log (splits idle most of the time) and of a dense one (who holds the stream changes every
tick) drawn per bucket."""
from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest

from event_replay.semantics.config import parse_config
from event_replay.semantics.model import LogRow
from quality_outputs import read_frames, write_case
from strategies import Case, random_case

pytestmark = pytest.mark.integration


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _config(**sections):
    raw = {"source": {"path": "unused"}, "window": {"type": "tumbling", "size": 4000},
           "aggregations": {"cnt": "count(*)"}, "output": {"path": "unused"},
           "watermark": {"max_out_of_orderness": 0, "interval": 200, "idle_timeout": 1000},
           "replay": {"start": 100, "end": 4000}}
    for k, v in sections.items():
        raw[k].update(v)
    return parse_config(raw)


def _report(spark, case: Case, out: Path):
    from event_replay.why.report import why_report

    cfg, _ = write_case(case, out)
    index = Path(why_report(str(out), cfg, spark=spark))
    return cfg, index, json.loads((index.parent / "summary.json").read_text())


def test_files_image_and_numbers_match_the_outputs(spark, tmp_path):
    from event_replay.why.report import figure_size_px

    seed = next(s for s in range(500) if len(random_case(s).rows) > 40 and random_case(s).cfg.watermark.periodic
                and len(random_case(s).declared_splits) >= 2)
    out = tmp_path / "out"
    cfg, index, summary = _report(spark, random_case(seed), out)
    assert index == out / "why_report" / "index.html" and index.is_file()
    png = out / "why_report" / "timelines.png"
    frames = read_frames(out)
    wm, win, late, counts = frames["watermarks"], frames["windows"], frames["late_events"], frames["counts"]
    splits = sorted(wm.loc[wm.scope == "split", "split"].unique())
    assert _png_size(png) == figure_size_px(len(splits)) == (summary["timelines_png"]["width"],
                                                              summary["timelines_png"]["height"])
    import matplotlib.image
    assert matplotlib.image.imread(png).shape[:2] == figure_size_px(len(splits))[::-1]  # decodes as an image
    assert summary["splits"] == splits
    # An output without filtered_rows (written with no row filter) filtered none: 0, as the accounting suite reads it.
    assert summary["counts"] == {"filtered_rows": 0, **{k: int(counts.loc[0, k]) for k in counts.columns}}
    assert summary["firings"] == len(win)
    assert summary["firings_by_reason"] == win.fire_reason.value_counts().to_dict()
    assert summary["windows"] == len(win[["key", "window_start", "window_end"]].drop_duplicates())
    assert sum(summary["windows_by_holder"].values()) == summary["windows"]
    assert summary["late_rows"] == len(late) == counts.loc[0, "late_rows"]
    assert summary["late_rows_by_split"] == late.split.value_counts().to_dict()
    t1 = int(wm.replay_time_ms.max())
    for s in splits:  # an idle mark followed by a change in the same millisecond (or at the end) is no period
        mine = wm[(wm.scope == "split") & (wm.split == s)].sort_values(
            ["replay_time_ms", "watermark_ms"], na_position="first")
        until = mine.replay_time_ms.shift(-1).fillna(t1)
        assert summary["idle"][s]["idle_periods"] == int((mine.idle & (until > mine.replay_time_ms)).sum())
    import pyarrow.parquet as pq

    holders = pq.read_table(out / "why_report" / "window_holders.parquet")  # one file, every window
    assert holders.column_names[:3] == ["key", "window_start", "window_end"] and holders.num_rows == summary["windows"]
    order = [(r["window_end"], r["window_start"], r["key"] is not None, r["key"]) for r in holders.to_pylist()]
    assert order == sorted(order, key=lambda o: o[:3] + (o[3] if o[2] else 0,))  # window order (null keys first),
    # whatever order the shuffle delivered them in
    buckets = pq.read_table(out / "why_report" / "timelines.parquet").to_pylist()
    assert {r["series"] for r in buckets} <= {"stream", *splits}
    html = index.read_text()
    assert "timelines.png" in html and "Late rows by split and cause" in html
    for target in re.findall(r"(?:href|src)='([^']+)'", html):  # every link of the report opens a file of it
        assert (index.parent / target).is_file(), target


def test_totals_are_the_sum_of_the_partitions(spark, tmp_path):
    """A `dt=` partitioned output: one row per partition, and the range totals add them all up (not the last); the
    firings by reason, from the same pass."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from event_replay.spark_jobs import gather
    from event_replay.why.report import _partition_frames, _partitions

    for dt, (read, late, fired) in {"2024-01-01": (5000, 19, 3), "2024-01-02": (4000, 22, 2)}.items():
        for name, table in {"counts": pa.table({"rows_read": [read], "rows_in_windows": [read - late],
                                                "late_rows": [late], "quarantined_rows": [1], "skipped_rows": [0]}),
                            "windows": pa.table({"key": ["k"] * fired,
                                                 "fire_reason": ["watermark"] * (fired - 1) + ["late_row"]})}.items():
            (tmp_path / name / f"dt={dt}").mkdir(parents=True)
            pq.write_table(table, tmp_path / name / f"dt={dt}" / "part-0.parquet")
    out = {n: spark.read.parquet(str(tmp_path / n)) for n in ("counts", "windows")}
    rows, totals, by_reason = _partitions(gather(_partition_frames(out)))
    assert [(r["partition"], r["rows_read"], r["late_rows"], r["firings"]) for r in rows] == \
        [("2024-01-01", 5000, 19, 3), ("2024-01-02", 4000, 22, 2)]
    assert totals == {"rows_read": 9000, "rows_in_windows": 8959, "late_rows": 41, "quarantined_rows": 2,
                      "skipped_rows": 0, "filtered_rows": 0}
    assert by_reason == {"watermark": 3, "late_row": 2}


def test_traffic_spans_zoom_on_the_bursts(spark):
    """Two bursts a day apart: two spans, each padded around its traffic; the idle night is left out."""
    from event_replay.why.timelines import traffic_spans

    day = 86_400_000
    rows = [(t, "split", "p0", False, t - 500) for t in range(0, 60_000, 200)]
    rows += [(day + t, "split", "p0", False, day + t - 500) for t in range(0, 30_000, 200)]
    rows += [(65_000, "split", "p0", True, None), (day + 40_000, "split", "p0", True, None)]
    wm = spark.createDataFrame(rows, "replay_time_ms long, scope string, split string, idle boolean, "
                                     "watermark_ms long")
    spans = traffic_spans(wm, 0, day + 40_000, pad_ms=10_000)
    assert [s.traffic_ms for s in spans] == [(0, 59_800), (day, day + 29_800)]
    assert [(s.start_ms, s.end_ms) for s in spans] == [(0, 69_800), (day - 10_000, day + 39_800)]


EXAMPLE_B = [("p0", 100, 1000), ("p1", 150, 1100), ("p0", 300, 5000), ("p0", 700, 9000), ("p0", 1500, 12000),
             ("p0", 2600, 15000), ("p1", 2700, 3000), ("p0", 2800, 16000)]


def test_example_b_p0_ran_ahead_while_p1_was_idle(spark, tmp_path):
    cfg = _config(source={"splits": ["p0", "p1", "p2"]})
    rows = tuple(LogRow(s, i, a, e, "a" if s == "p0" else "b") for i, (s, a, e) in enumerate(EXAMPLE_B))
    _, _, summary = _report(spark, Case(-1, rows, cfg, ("p0", "p1", "p2")), tmp_path / "out")
    # [0,4000) x2, [4000,8000), [8000,12000) fire at 11999, published by p0; two windows flush.
    assert summary["windows_by_holder"] == {"p0": 4, "end of input": 2}
    assert summary["late_rows_by_split_and_cause"] == [{"split": "p1", "cause": "p0", "rows": 1}]
    assert summary["idle"]["p2"]["idle_periods"] == 1 and summary["idle"]["p1"]["idle_periods"] == 1


def test_example_c_all_idle_jump(spark, tmp_path):
    cfg = _config()
    rows = (LogRow("p0", 0, 100, 10000, "a"), LogRow("p1", 0, 150, 1000, "b"), LogRow("p1", 1, 3000, 2000, "b"))
    _, _, summary = _report(spark, Case(-1, rows, cfg, ("p0", "p1")), tmp_path / "out")
    assert summary["late_rows_by_split_and_cause"] == [{"split": "p1", "cause": "all-idle jump", "rows": 1}]
    assert summary["windows_by_holder"].get("all-idle jump") == 1  # b's [0,4000) fired at 9999 while all idle
    assert summary["idle"]["stream"]["idle_periods"] >= 1


def test_tuning_section_when_a_tuning_result_exists(spark, tmp_path):
    """No section without `replay tune` results; with one, its table and plot (copied next to the report)."""
    from event_replay.tuning import parse_grid
    from event_replay.tuning.runner import tuning_folder, write_result

    cfg = _config()
    rows = (LogRow("p0", 0, 100, 10000, "a"), LogRow("p1", 0, 150, 1000, "b"), LogRow("p1", 1, 3000, 2000, "b"))
    case, out = Case(-1, rows, cfg, ("p0", "p1")), tmp_path / "out"
    _, index, summary = _report(spark, case, out)
    assert summary["tuning"] == [] and "What-if tuning" not in index.read_text()
    grid, variants = parse_grid(cfg.with_overrides(output={"path": str(out)}), "0,1s", "none")
    figures = [{"variant": v.name, "max_out_of_orderness_ms": v.max_out_of_orderness_ms, "idle_timeout_ms": None,
                "allowed_lateness_ms": 0, "rows": 3, "late_rows": 1 - i, "late_share": (1 - i) / 3,
                "windows_late_fired": 0, "wm_lag_mean_ms": 10.0 + 1000 * i, "wm_lag_p99_ms": 11 + 1000 * i,
                "first_fire_delay_mean_ms": 5.0, "first_fire_delay_windows": 2, "firings": 2, "windows": 2,
                "late_rows_by_cause": "all-idle jump 1" if i == 0 else "", "late_rows_by_split": ""}
               for i, (v, _) in enumerate(variants)]
    write_result(tuning_folder(variants[0][1], grid), variants[0][1], grid, figures, source_info={"rows": 3})
    _, index, summary = _report(spark, case, out)
    (entry,) = summary["tuning"]
    assert entry["name"] == grid.name == "delay_0ms-1s__idle_none__lateness_0ms"
    assert [r["late_rows"] for r in entry["rows"]] == [1, 0]
    png = index.parent / entry["plot"]
    assert png.read_bytes() == (out / "_tuning" / grid.name / "late_share_vs_lag.png").read_bytes()
    assert _png_size(png) == (900, 600)
    page = index.read_text()
    assert "What-if tuning" in page and f"src='{entry['plot']}'" in page
    assert "<td>delay 1s, idle none, lateness 0ms</td><td class='n'>0</td><td class='n'>0.000%</td>" in page


def test_a_short_dense_log_is_one_span(spark):
    """Watermarks every 200 ms for 2 s: no silence worth cutting, one column."""
    from event_replay.why.timelines import traffic_spans

    rows = [(t, "split", "p0", False, t - 500) for t in range(0, 2_000, 200)]
    wm = spark.createDataFrame(rows, "replay_time_ms long, scope string, split string, idle boolean, "
                                     "watermark_ms long")
    assert [(s.start_ms, s.end_ms) for s in traffic_spans(wm, 0, 2_000, pad_ms=10_000)] == [(0, 2_000)]


def _sample_report(spark, tmp_path: Path, name: str, **spec):
    """`replay sample` with `spec`, replayed with the demo's settings by the engine, then its why-report; the PNG is
    also left in build/screenshots/ (or $REPLAY_SCREENSHOTS) for a person to look at."""
    import os
    import shutil

    import pyarrow.parquet as pq

    from event_replay.job import run_replay
    from event_replay.why.report import why_report
    from event_replay.samples.log import SampleSpec, write_sample
    from event_replay.semantics.config import load_config

    root = Path(__file__).resolve().parents[2]
    write_sample(tmp_path / "log", SampleSpec(seed=7, **spec))
    raw = (root / "jobs" / "configs" / "demo.yaml").read_text()
    config = tmp_path / "job.yaml"
    config.write_text(raw.replace("path: data/sample", f"path: {tmp_path / 'log'}")
                      .replace("path: out/demo", f"path: {tmp_path / 'out'}"))
    cfg = load_config(config)
    run_replay(spark, cfg)
    index = Path(why_report(cfg.output.path, cfg, spark=spark))
    shots = Path(os.environ.get("REPLAY_SCREENSHOTS") or root / "build" / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(index.parent / "timelines.png", shots / f"why-timelines-{name}.png")
    summary = json.loads((index.parent / "summary.json").read_text())
    rows = pq.read_table(index.parent / "timelines.parquet").to_pylist()
    return cfg, summary, rows


def _by(rows, series):
    return {(r["span"], r["bucket"]): r for r in rows if r["series"] == series}


def _consistent(rows, splits):
    """An idle split holds nothing; the stream is all-idle only while every split is idle."""
    stream = _by(rows, "stream")
    for s in splits:
        for key, r in _by(rows, s).items():
            assert r["idle_share"] + r["held_share"] <= 1 + 1e-9, r
            assert stream.get(key, {"idle_share": 0})["idle_share"] <= r["idle_share"] + 1e-9, (key, s)


def test_a_sparse_log_is_drawn_mostly_idle_with_its_lag(spark, tmp_path):
    """300 rows over 8 hours: every split is idle most of the time, so is the stream. The lanes show how much of
    each bucket (grey) instead of painting every touched bucket, and the lag is defined all along (the stream keeps
    its watermark while all idle), at least the strategy's 501 ms."""
    cfg, summary, rows = _sample_report(spark, tmp_path, "sparse", rows=300, splits=3, rate=0.01)
    splits = summary["splits"]
    _consistent(rows, splits)
    stream = list(_by(rows, "stream").values())
    lags = [r for r in stream if r["lag_p50_ms"] is not None]
    assert len(lags) >= 0.9 * len(stream), "the lag panel is drawn over the whole span"
    assert min(r["lag_p50_ms"] for r in lags) >= cfg.watermark.lag_ms
    assert sorted(r["idle_share"] for r in stream)[len(stream) // 2] > 0.5  # idle most of the time
    for s in splits:
        held = [r["held_share"] for r in _by(rows, s).values()]
        assert max(held) < 0.5, (s, max(held))  # a split holds the stream for seconds of a long bucket
    assert summary["watermark_lag_ms"]["p99"] >= cfg.watermark.lag_ms


def test_a_dense_log_shows_the_share_each_split_held(spark, tmp_path):
    """60,000 rows over 50 minutes in 9 splits: the holder changes every few ticks, faster than a bucket. Each lane
    says which share of the bucket its split held the stream (not a solid bar for all), and the lag's percentiles
    are never below the strategy's lag (no negative dips: the newest event time is never below the stream)."""
    cfg, summary, rows = _sample_report(spark, tmp_path, "dense", rows=60_000, splits=9, rate=20)
    splits = summary["splits"]
    _consistent(rows, splits)
    stream = list(_by(rows, "stream").values())
    assert all(r["lag_p50_ms"] >= cfg.watermark.lag_ms and r["lag_max_ms"] >= r["lag_p90_ms"] >= r["lag_p50_ms"]
               for r in stream if r["lag_p50_ms"] is not None)
    mean_held = {s: sum(r["held_share"] for r in _by(rows, s).values()) / max(1, len(stream)) for s in splits}
    assert all(v < 0.8 for v in mean_held.values()), mean_held  # no split holds it all the time
    assert sum(1 for s in splits for r in _by(rows, s).values() if 0.05 < r["held_share"] < 0.95) > len(stream), \
        "held shares between none and all: several splits take turns inside a bucket"

