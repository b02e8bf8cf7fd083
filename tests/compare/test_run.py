"""One comparison end to end (compare/run.py: `compare`), as `replay compare` and `replay tune
--against-live` (tuning/calibrate.py) run it, with a real live side: the live job's output comes from the Flink
differential harness (Flink 2.3's own classes on a generated log, tests/flink), written as a sink would write it.

- equal settings: full agreement (every firing, and the last firing per window);
- each perturbation of the live job is found and explained (the setting that differs named first): another idle
  timeout, another out-of-orderness, an input partition (split) it never read, a restart that re-emitted an hour (duplicates, not differences), a changed
  aggregate;
- calibration ranks the grid's variants and puts the live job's true idle timeout and out-of-orderness first.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from live_cases import (SINK_COLUMNS, LiveJob, duplicated_hour, flink_live, job_config, production_log,  # noqa: E402
                        write_log, write_sink)

pytestmark = [pytest.mark.flink, pytest.mark.spark]

ROWS = tuple(production_log())
JOBS = [
    LiveJob("equal", ROWS, {}),
    LiveJob("idle_timeout_30s", ROWS, {"idle_timeout": "30s"}),
    LiveJob("out_of_orderness_3s", ROWS, {"max_out_of_orderness": "3s"}),
    LiveJob("split_p2_never_read", tuple(r for r in ROWS if r.split != "p2"), {}, splits=("p0", "p1", "p3")),
    LiveJob("total_in_cents", tuple(dataclasses.replace(r, payload={"value": 100 * r.payload["value"]}) for r in ROWS),
            {}),
    LiveJob("true_settings", ROWS, {"idle_timeout": "30s", "max_out_of_orderness": "3s"}),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory, spark):
    """The log, the replay of it with the config's settings, and every live job's Flink result."""
    from event_replay.job import run_replay

    root = tmp_path_factory.mktemp("compare-vs-flink")
    write_log(ROWS, root / "log")
    cfg = job_config(str(root / "log"), str(root / "out"))
    run_replay(spark, cfg)
    return {"root": root, "cfg": cfg, "flink": flink_live(JOBS)}


def _compare(spark, world, name: str, *, fmt: str = "json", keeps_updates: bool = True, reemit=None,
             late_identity: str = "key", out: str | None = None) -> dict:
    from event_replay.compare.live_spec import LiveSpec
    from event_replay.compare.run import CompareOptions, compare

    root = world["root"]
    sink, late = write_sink(world["flink"][name], root / "live" / (out or name), fmt=fmt, reemit=reemit,
                            late_identity=late_identity)
    spec = LiveSpec(path=str(sink), format=fmt, columns=SINK_COLUMNS, late_path=str(late),
                    keeps_updates=keeps_updates)
    return compare(spark, world["cfg"], spec, CompareOptions(out_dir=str(root / "compare" / (out or name))))


def _windows(spark, out_dir: str):
    """The per-window table the comparison wrote (compare/windows)."""
    return spark.read.parquet(str(Path(out_dir, "windows")))


def _differences(spark, summary: dict):
    return [r.asDict() for r in _windows(spark, summary["out_dir"])
            .where("class IN ('value_differs', 'replay_only', 'live_only')").collect()]


def _kinds(summary: dict) -> dict[str, dict]:
    return {h["kind"]: h for h in summary["hints"]}


def _every_difference_explained(spark, summary: dict) -> list[dict]:
    diffs = _differences(spark, summary)
    unexplained = [d for d in diffs if not d["explanation"] or d["explanation"].startswith("no evidence")]
    assert not unexplained, f"{len(unexplained)} of {len(diffs)} differences unexplained, e.g. {unexplained[:2]}"
    return diffs


@pytest.mark.parametrize("fmt,keeps_updates,late_identity", [("json", True, "key"), ("parquet", False, "split")])
def test_equal_settings_agree_fully(spark, world, fmt, keeps_updates, late_identity):
    from event_replay.compare.summary import differs

    s = _compare(spark, world, "equal", fmt=fmt, keeps_updates=keeps_updates, late_identity=late_identity,
                 out=f"equal-{fmt}")
    t = s["totals"]
    assert t["windows"] > 5000 and t["agreement_pct"] == 100.0, t
    assert (t["differing"], t["duplicate"], t["late_replay_only"], t["late_live_only"]) == (0, 0, 0, 0), t
    assert t["late_matched"] == len(world["flink"]["equal"].late_rows) > 0
    assert not differs(s) and not [h for h in s["hints"] if h["kind"] != "timing"]
    assert s["live"]["late_identity"] == ("split, offset" if late_identity == "split" else "key, event time")
    assert all(p["agreement_pct"] == 100.0 for p in s["partitions"])
    assert Path(s["page"]).is_file() and (Path(s["out_dir"]) / "partitions.parquet").is_file()
    r = s["rows"]  # the replay's counts/: every row read counted once, filtered ones included
    assert r["rows_read"] == sum(r[c] for c in ("rows_in_windows", "late_rows", "quarantined_rows", "skipped_rows",
                                                "filtered_rows")) > 0


def test_another_idle_timeout_is_found_and_explained(spark, world):
    s = _compare(spark, world, "idle_timeout_30s")
    t = s["totals"]
    assert t["differing"] > 0 and t["late_replay_only"] > 0 and t["late_live_only"] == 0, t
    # The diagnosis leads: the setting and its evidence; medium, as a longer emission interval gives the same
    # firings (Flink checks idleness at its periodic emits) and the hint names it as the other cause (issue 47).
    first = s["hints"][0]
    assert (first["kind"], first["setting"], first["confidence"]) == ("cause", "idle_timeout", "medium"), s["hints"]
    assert "a longer idle timeout than the replay's 5s" in first["text"] and "Evidence: " in first["text"]
    assert "emission interval" in first["text"], first["text"]
    assert "split_not_read" not in _kinds(s)
    diffs = _every_difference_explained(spark, s)
    assert any("late in the replay only" in d["explanation"] for d in diffs)
    # "the live job fired this window after its idle timeout by its wall clock, the replay by arrival time"
    assert any("by arrival time, the live job by its wall clock" in d["explanation"] and "p3" in d["idle_before"]
               for d in diffs)


def test_another_out_of_orderness_is_found_and_explained(spark, world):
    s = _compare(spark, world, "out_of_orderness_3s")
    t = s["totals"]
    assert t["differing"] > 0 and t["late_replay_only"] > 0 and t["late_live_only"] == 0, t
    first = s["hints"][0]
    assert (first["kind"], first["setting"], first["confidence"]) == ("cause", "max_out_of_orderness", "high"), first
    assert "the live job ran with 3s, the replay with 1s" in first["text"] and "shifted by +2000 ms" in first["text"]
    assert "split_not_read" not in _kinds(s)
    diffs = _every_difference_explained(spark, s)
    assert sum("late in the replay only" in d["explanation"] for d in diffs) >= t["late_replay_only"] // 3
    # the live job fired its windows later: at another watermark, noted even where the values agree
    assert _kinds(s)["timing"]["windows"] > t["windows"] // 2


def test_a_split_the_live_job_never_read_is_found(spark, world):
    s = _compare(spark, world, "split_p2_never_read")
    t = s["totals"]
    assert t["value_differs"] > 0 and t["replay_only"] > 0, t
    hint = _kinds(s)["split_not_read"]
    assert hint["split"] == "p2" and hint["windows"] > 100, hint
    assert s["hints"][0]["kind"] == "split_not_read", s["hints"]
    diffs = _every_difference_explained(spark, s)
    lacking = [d for d in diffs if d["count_delta"] is not None and d["count_delta"] < 0 or d["class"] == "replay_only"]
    assert sum(d["missing_split"] == "p2" for d in lacking) > len(lacking) // 2
    assert not any(d["missing_split"] not in (None, "p2") for d in diffs)


@pytest.mark.parametrize("keeps_updates", [False, True])
def test_a_restart_that_reemitted_an_hour_is_reported_as_duplicates(spark, world, keeps_updates):
    from event_replay.compare.summary import differs

    lo, hi = duplicated_hour(world["flink"]["equal"])
    s = _compare(spark, world, "equal", fmt="parquet", keeps_updates=keeps_updates, reemit=(lo, hi),
                 late_identity="split", out=f"restart-{keeps_updates}")
    t = s["totals"]
    assert t["duplicate"] > 500 and t["differing"] == 0 and t["agreement_pct"] == 100.0, t
    assert not differs(s)  # duplicates are not differences: exit 0
    hint = _kinds(s)["duplicates"]
    assert hint["windows"] == t["duplicate"] and "at-least-once" in hint["text"]
    dups = [r.asDict() for r in _windows(spark, s["out_dir"]).where("class = 'duplicate'")
            .select("window_end_ms", "live_copies").collect()]
    # the re-emitted firings are those of that hour: their windows end within it (plus the delay and lateness)
    assert all(lo - 60_000 <= d["window_end_ms"] <= hi and d["live_copies"] >= 1 for d in dups)


def test_a_changed_aggregate_is_found(spark, world):
    s = _compare(spark, world, "total_in_cents")
    t = s["totals"]
    assert t["value_differs"] == t["windows"] and t["late_replay_only"] == t["late_live_only"] == 0, t
    hint = _kinds(s)["changed_aggregate"]
    assert hint["aggregate"] == "total" and "100 x replayed total" in hint["text"], hint
    diffs = _every_difference_explained(spark, s)
    assert all(d["differing"] == "total" for d in diffs)


def test_calibration_recovers_the_true_idle_timeout_and_out_of_orderness(spark, world):
    from event_replay.tuning import calibrate
    from event_replay.compare.live_spec import LiveSpec
    from event_replay.tuning.grid import parse_grid
    from event_replay.tuning.runner import run_tuning

    root, cfg = world["root"], world["cfg"]
    sink, late = write_sink(world["flink"]["true_settings"], root / "live" / "calibration")
    spec = LiveSpec(path=str(sink), format="json", columns=SINK_COLUMNS, late_path=str(late), keeps_updates=True)
    grid, variants = parse_grid(cfg, "1s,3s", "5s,30s")
    result = run_tuning(spark, cfg, grid, variants, log=lambda m: None,
                        per_variant=calibrate.per_variant(spark, cfg, spec))
    calibrate.write_ranking(result.folder, spec, result.rows)
    ranked = sorted(result.rows, key=lambda r: r["live_rank"])
    best = ranked[0]
    assert (best["max_out_of_orderness_ms"], best["idle_timeout_ms"]) == (3000, 30000), calibrate.ranking_table(ranked)
    assert best["live_rank"] == 1 and all(r["live_rank"] > 1 for r in ranked[1:])
    assert best["live_score"] == 1.0 and best["live_agreement_pct"] == 100.0
    assert best["live_late_matched"] == best["live_late_union"] == len(world["flink"]["true_settings"].late_rows)
    assert all(r["live_score"] < 1.0 for r in ranked[1:])
    report = calibrate.report(result.folder)
    assert report.startswith("calibration: the live output agrees best with delay 3s, idle 30s")
    assert (result.folder / "calibration.json").is_file()
    import pandas as pd  # the grid's own tables carry the rank too (tuning.csv, tuning.md, its page)

    assert sorted(pd.read_csv(result.folder / "tuning.csv")["live_rank"]) == sorted(r["live_rank"] for r in ranked)
    assert "| rank vs live |" in (result.folder / "tuning.md").read_text()
