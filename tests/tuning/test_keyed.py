"""The keyed pass of a what-if grid (tuning/keyed.py): every variant's firings and late rows equal a separate
engine.replay of that variant, and so does every figure of its row computed with the other variants in one plan
keyed by variant (figures.py), for a grid whose variants differ in delay, idle timeout and allowed lateness over a
log with an idle split and late rows."""
from __future__ import annotations

from event_replay.semantics.config import parse_config
from event_replay.tuning import parse_grid


def _cfg(source: str, out: str, **extra):
    return parse_config({
        "source": {"path": source, "splits": ["p0", "p1", "p2"]},
        "window": {"type": "sliding", "size": "2s", "slide": "1s", "allowed_lateness": "500ms"},
        "watermark": {"max_out_of_orderness": "200ms", "interval": "200ms", "idle_timeout": "1s"},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)", "top": "max(value)"},
        "output": {"path": out}, **extra})


def _sorted(df):
    return sorted(tuple(r) for r in df.collect())


def test_keyed_pass_equals_separate_replays(spark, tmp_path):
    from event_replay import engine
    from event_replay.pipeline import WholeSource
    from event_replay.samples.log import SampleSpec, write_sample
    from event_replay.spark_jobs import gather, one_job_plans
    from event_replay.tuning import figures
    from event_replay.tuning.keyed import VARIANT, keyed_replay, side_by_side

    src = tmp_path / "log"
    # 3 splits, the last falling silent (idleness matters); stragglers: late rows and late firings.
    write_sample(str(src), SampleSpec(rows=400, splits=3, seed=3, keys=3, rate=25.0, files=2,
                                      straggler_fraction=0.06))
    # HAVING reads the key: the keyed pass applies it once the variant is out of the key.
    cfg = _cfg(str(src), str(tmp_path / "out"), having="cnt > 1 or key = 'k01'")
    _, variants = parse_grid(cfg, "0ms,30s", "none,1s", "0,20s")
    # Four of the eight: each pair differs in all three settings.
    cfgs = [vcfg for v, vcfg in variants if (v.max_out_of_orderness_ms == 0) == (v.allowed_lateness_ms == 0)]
    assert len({(c.watermark.max_out_of_orderness_ms, c.watermark.idle_timeout_ms, c.window.allowed_lateness_ms)
                for c in cfgs}) == 4
    whole = WholeSource()
    source = whole.read(spark, cfg, None)
    try:
        clock = whole.clock(source)
        rows = source.rows.localCheckpoint(eager=True)
        keyed = keyed_replay(spark, rows, cfgs, source.splits, clock, source.tick_partials)
        assert keyed is not None
        assert VARIANT in keyed.windows.columns and VARIANT in keyed.late_events.columns
        numbered = dict(enumerate(cfgs))

        def rows_of(outputs, mine: dict) -> dict:
            """Each variant's row of the figures of `mine` (number -> config), computed in one plan."""
            with one_job_plans(spark):
                found = gather(figures.variant_figure_frames(outputs, mine, clock.end_ms))
            return {i: figures.variant_row(own, mine[i], source.clean_rows)
                    for i, own in figures.by_variant(found).items()}

        together = rows_of(keyed, numbered)
        assert sorted(together) == sorted(numbered)
        late_counts, firing_kinds, outputs = set(), set(), set()
        late_by_variant: list = []
        separate: dict = {}
        for i, vcfg in enumerate(cfgs):
            alone, _ = engine.replay(spark, rows, vcfg, source.splits, clock)
            mine = keyed.result(i)
            assert mine.windows.columns == alone.windows.columns
            assert mine.late_events.columns == alone.late_events.columns
            expected_windows, expected_late = _sorted(alone.windows), _sorted(alone.late_events)
            assert _sorted(mine.windows) == expected_windows, vcfg.watermark
            assert _sorted(mine.late_events) == expected_late, vcfg.watermark
            assert _sorted(mine.watermarks) == _sorted(alone.watermarks)
            separate[i] = alone
            late_counts.add(len(expected_late))
            late_by_variant.append(expected_late)
            outputs.add((tuple(expected_windows), tuple(expected_late)))
            reason = alone.windows.columns.index("fire_reason")
            firing_kinds |= {r[reason] for r in expected_windows}
        # The case is not trivial: the variants differ, with late rows and late firings.
        assert len(outputs) == len(cfgs) and len(late_counts) > 1 and max(late_counts) > 0
        assert {"watermark", "late_row"} <= firing_kinds
        # Every figure of each variant's row (tuning.json's columns), against the figures of its separate replay
        # (tests/tuning/test_runner.py: each variant's figures gathered alone too).
        assert rows_of(side_by_side(separate), numbered) == together
        # ... and so do their figures: the lag, the late causes (an idle split holds the watermark or not).
        assert len({(r["wm_lag_mean_ms"], r["first_fire_delay_mean_ms"]) for r in together.values()}) == len(cfgs)
        assert len({r["late_rows_by_cause"] for r in together.values()}) > 1
        assert [together[i]["late_rows"] for i in numbered] == [len(late) for late in late_by_variant]
    finally:
        engine.release(spark)
        source.release()


def test_variant_keys_a_string_for_a_string_key_else_a_struct(spark):
    """The keyed pass's (variant, key): one string for a string key (a null key too), a struct for any other key
    type; either way the variant and the key come back as they were."""
    from pyspark.sql import functions as F

    from event_replay.tuning.keyed import VariantKeys

    for keys, dtype in ((["k1", None, "", "0|k1"], "string"), ([7, None, -1], "long")):
        rows = spark.createDataFrame([(k,) for k in keys], f"key {dtype}")
        vk = VariantKeys.of(rows, 12)
        assert (vk.digits is None) == (dtype != "string")
        tagged = [rows.withColumn("key", vk.key(i)).withColumn("i", F.lit(i)) for i in (0, 11)]
        out = tagged[0].unionByName(tagged[1]).select("i", vk.variant().alias("v"), vk.unkeyed().alias("k"),
                                                      F.col("key").alias("tagged")).collect()
        assert sorted((r["v"], str(r["k"])) for r in out) == sorted((i, str(k)) for i in (0, 11) for k in keys)
        assert all(r["v"] == r["i"] for r in out) and len({str(r["tagged"]) for r in out}) == len(out)
