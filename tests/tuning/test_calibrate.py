"""Calibration against the live output (tuning/calibrate.py): the ranking of the grid's variants (equal scores share
a rank, the watermarks matched break a tie), its verdict and table, and the files written next to the grid's result.
Each variant's figures against a real Flink live side: tests/compare/test_run.py (the calibration test)."""
from __future__ import annotations

import json

import pytest

from event_replay.compare.live_spec import LiveSpec
from event_replay.tuning.calibrate import rank, ranking_table, report, verdict, write_ranking


def _row(variant: str, score: float | None, wm: int | None = None, **more) -> dict:
    return {"variant": variant, "live_score": score, "live_agreement_pct": 100.0 * (score or 0),
            "live_firings_matched": 7, "live_firings": 9, "live_late_matched": None, "live_late_union": None,
            "live_watermarks_matched": wm, **more}


def test_rank_best_first_ties_share_a_rank_and_watermarks_break_them():
    rows = [_row("a", 0.5), _row("b", 0.9, wm=3), _row("c", 0.9, wm=5), _row("d", 0.5), _row("e", None)]
    ordered = rank(rows)
    assert [(r["variant"], r["live_rank"]) for r in ordered] == [("c", 1), ("b", 2), ("a", 3), ("d", 3), ("e", 5)]
    assert {r["variant"]: r["live_rank"] for r in rows}["e"] == 5  # the rows themselves carry their rank


def test_verdict_names_the_best_variant_or_the_tie():
    assert verdict([]) == "calibration: no variant"
    one = rank([_row("delay 3s, idle 30s", 1.0), _row("delay 1s, idle 5s", 0.75)])
    assert verdict(one) == ("calibration: the live output agrees best with delay 3s, idle 30s (score 100%, "
                            "windows agreeing 100%)")
    tie = rank([_row("x", 0.5), _row("y", 0.5)])
    assert verdict(tie) == ("calibration: 2 variants agree equally with the live output (50.00%): x; y (the grid "
                            "cannot tell them apart on this output)")


def test_ranking_table_shows_matched_of_how_many():
    rows = rank([_row("v", 0.8, wm=4, live_late_matched=3, live_late=4, live_late_union=5)])
    head, sep, line = ranking_table(rows).split("\n")
    assert head == ("| rank | variant | score | windows agreeing | firings matched | late rows matched | "
                    "same fire watermark |")
    assert sep.count("---") == 7
    assert line == "| 1 | v | 80.00% | 80.00% | 7 of 9 | 3 of 4 | 4 |"  # of the live job's late rows, not the union
    old = rank([_row("v", 0.8, wm=4, live_late_matched=3, live_late_union=5)])  # written before live_late was kept
    assert ranking_table(old).split("\n")[2] == "| 1 | v | 80.00% | 80.00% | 7 of 9 | 3 of 5 on either side | 4 |"
    assert ranking_table(rank([_row("w", 0.8)])).split("\n")[2] == "| 1 | w | 80.00% | 80.00% | 7 of 9 | - | - |"


def test_write_ranking_beside_the_grid_and_into_its_tuning_json(tmp_path):
    (tmp_path / "tuning.json").write_text(json.dumps({"grid": "g", "rows": []}))
    spec = LiveSpec(path="/live/out", format="json", late_path="/live/late", keeps_updates=True)
    rows = [_row("a", 0.5), _row("b", 1.0)]
    write_ranking(tmp_path, spec, rows)
    doc = json.loads((tmp_path / "calibration.json").read_text())
    assert doc["live"] == {"path": "/live/out", "format": "json", "late_path": "/live/late", "keeps_updates": True}
    assert [r["variant"] for r in doc["ranking"]] == ["b", "a"] and doc["verdict"].startswith(
        "calibration: the live output agrees best with b")
    tuning = json.loads((tmp_path / "tuning.json").read_text())
    assert tuning["grid"] == "g" and tuning["calibration"] == doc
    assert [(r["variant"], r["live_rank"]) for r in tuning["rows"]] == [("a", 2), ("b", 1)]  # the grid's order
    md = (tmp_path / "calibration.md").read_text()
    assert md.startswith("# Calibration against /live/out\n\n")
    assert report(tmp_path) == f"{doc['verdict']}\n\n{ranking_table(doc['ranking'])}"


@pytest.mark.parametrize("keyless", [False, True])
def test_variants_matched_together_equal_each_matched_alone(spark, tmp_path, keyless):
    """AgainstLive.frames matches every variant in one plan, keyed by variant: each variant's columns equal those
    of its match alone (no row of one variant meets another's), windows and late rows (by split and offset); a
    job without a key too (every window has the comparison's one key, tagged with its variant)."""
    from event_replay import engine
    from event_replay.job import run_replay
    from event_replay.pipeline import WholeSource
    from event_replay.samples.log import SampleSpec, write_sample
    from event_replay.semantics.config import parse_config
    from event_replay.spark_jobs import gather
    from event_replay.tuning import parse_grid
    from event_replay.tuning.calibrate import per_variant
    from event_replay.tuning.keyed import side_by_side

    write_sample(str(tmp_path / "log"), SampleSpec(rows=300, splits=3, seed=5, keys=3, rate=25.0, files=2,
                                                   straggler_fraction=0.05))
    log = tmp_path / "log"
    if keyless:  # the same rows without their key column
        spark.read.parquet(str(log)).drop("key").write.parquet(str(tmp_path / "keyless"))
        log = tmp_path / "keyless"
    cfg = parse_config({
        "source": {"path": str(log), **({"columns": {"key": None}} if keyless else {})},
        "window": {"type": "tumbling", "size": "2s"},
        "watermark": {"max_out_of_orderness": "200ms", "interval": "200ms", "idle_timeout": "1s"},
        "aggregations": {"cnt": "count(*)"}, "output": {"path": str(tmp_path / "live")}})
    run_replay(spark, cfg)  # the live output: the base config's own
    spec = LiveSpec(path=str(tmp_path / "live" / "windows"), late_path=str(tmp_path / "live" / "late_events"),
                    keeps_updates=True)
    _, variants = parse_grid(cfg, "100ms,200ms,3s", None)
    whole = WholeSource()
    source = whole.read(spark, cfg, None)
    try:
        clock = whole.clock(source)
        results = [(i, engine.replay(spark, source.rows, vcfg, source.splits, clock)[0], vcfg)
                   for i, (_, vcfg) in enumerate(variants, 1)]
        hook = per_variant(spark, cfg, spec)
        together = gather(hook.frames(results, side_by_side({i: r for i, r, _ in results})))
        rows = [hook.row(together, i) for i, _, _ in results]
        for (i, result, vcfg), row in zip(results, rows):
            assert row == hook.row(gather(hook.frames([(i, result, vcfg)], side_by_side({i: result}))), i)
        assert rows[1]["live_score"] == 1.0 and rows[0]["live_score"] < 1.0  # the live's own settings agree
        assert rows[2]["live_late_matched"] < rows[2]["live_late"]
    finally:
        engine.release(spark)
        source.release()
