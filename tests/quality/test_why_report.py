"""The why-report: files, a real PNG of the documented size, numbers that match the outputs, and the attributions
of SEMANTICS §8 B (an idle split let p0 run ahead) and C (the all-idle jump)."""
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
    from event_replay.quality import why_report

    cfg, _ = write_case(case, out)
    index = Path(why_report(str(out), cfg, spark=spark))
    return cfg, index, json.loads((index.parent / "summary.json").read_text())


def test_files_image_and_numbers_match_the_outputs(spark, tmp_path):
    from event_replay.quality.why import figure_size_px

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
    assert summary["counts"] == {k: int(counts.loc[0, k]) for k in counts.columns}
    assert summary["firings"] == len(win)
    assert summary["firings_by_reason"] == win.fire_reason.value_counts().to_dict()
    assert summary["windows"] == len(win[["key", "window_start", "window_end"]].drop_duplicates())
    assert sum(summary["windows_by_holder"].values()) == summary["windows"]
    assert summary["late_rows"] == len(late) == counts.loc[0, "late_rows"]
    assert summary["late_rows_by_split"] == late.split.value_counts().to_dict()
    idle_changes = wm[wm.idle]
    for s in splits:
        assert summary["idle"][s]["idle_periods"] == int((idle_changes.split == s).sum())
    holders_csv = (out / "why_report" / "window_holders.csv").read_text().splitlines()
    assert holders_csv[0].startswith("key,window_start,window_end") and len(holders_csv) == 1 + summary["windows"]
    html = index.read_text()
    assert "timelines.png" in html and "Late rows by split and cause" in html
    for target in re.findall(r"(?:href|src)='([^']+)'", html):  # every link of the report opens a file of it
        assert (index.parent / target).is_file(), target


def test_totals_are_the_sum_of_the_partitions(spark, tmp_path):
    """A `dt=` partitioned output: one row per partition, and the range totals add them all up (not the last)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from event_replay.quality.why import _partitions

    for dt, (read, late, fired) in {"2024-01-01": (5000, 19, 3), "2024-01-02": (4000, 22, 2)}.items():
        for name, table in {"counts": pa.table({"rows_read": [read], "rows_in_windows": [read - late],
                                                "late_rows": [late], "quarantined_rows": [1], "skipped_rows": [0]}),
                            "windows": pa.table({"key": ["k"] * fired})}.items():
            (tmp_path / name / f"dt={dt}").mkdir(parents=True)
            pq.write_table(table, tmp_path / name / f"dt={dt}" / "part-0.parquet")
    out = {n: spark.read.parquet(str(tmp_path / n)) for n in ("counts", "windows")}
    rows, totals = _partitions(out)
    assert [(r["partition"], r["rows_read"], r["late_rows"], r["firings"]) for r in rows] == \
        [("2024-01-01", 5000, 19, 3), ("2024-01-02", 4000, 22, 2)]
    assert totals == {"rows_read": 9000, "rows_in_windows": 8959, "late_rows": 41, "quarantined_rows": 2,
                      "skipped_rows": 0}


def test_traffic_spans_zoom_on_the_bursts(spark):
    """Two bursts a day apart: two spans, each padded around its traffic; the idle night is left out."""
    from event_replay.quality.why_timelines import traffic_spans

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
    assert "<td>delay 1s, idle none, lateness 0ms</td><td>0</td><td>0.000%</td>" in page


def test_a_short_dense_log_is_one_span(spark):
    """Watermarks every 200 ms for 2 s: no silence worth cutting, one column."""
    from event_replay.quality.why_timelines import traffic_spans

    rows = [(t, "split", "p0", False, t - 500) for t in range(0, 2_000, 200)]
    wm = spark.createDataFrame(rows, "replay_time_ms long, scope string, split string, idle boolean, "
                                     "watermark_ms long")
    assert [(s.start_ms, s.end_ms) for s in traffic_spans(wm, 0, 2_000, pad_ms=10_000)] == [(0, 2_000)]
