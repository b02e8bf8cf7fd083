"""The custom expectations (quality/expectations.py) in the GX suites on replay outputs (the saved suites themselves:
test_suites.py): all pass on the reference model's outputs (tumbling, sliding, session; flush and hold), and each
rule fails on an output broken on purpose. One Spark session and one GX import for the module; a broken output is
validated with its own suite only, to keep the module short."""
from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
import pytest

from event_replay.quality.suites import load_suites
from quality_outputs import read_frames, write_case, write_frames
from strategies import random_case

pytestmark = pytest.mark.integration

logging.getLogger("great_expectations").setLevel(logging.WARNING)

# Every window type and both ends of input, in four full validations (GX on Spark is slow).
COMBOS = [("tumbling", "flush"), ("sliding", "hold"), ("session", "flush"), ("session", "hold")]


def _find_seed(pred, limit: int = 3000) -> int:
    for seed in range(limit):
        if pred(random_case(seed)):
            return seed
    raise AssertionError("no generated case fits")  # the generator changed: pick other properties


def _combo_seed(wtype: str, eoi: str) -> int:
    from event_replay.semantics.reference import replay

    def fits(c):
        if c.cfg.window.type != wtype or c.cfg.replay.end_of_input != eoi or len(c.rows) < 30:
            return False
        r = replay(c.rows, c.cfg, declared_splits=c.declared_splits)
        return len(r.firings) >= 3 and len(r.late_rows) >= 1
    return _find_seed(fits)


def _base_seed() -> int:
    """A flushed tumbling case with everything the breaks need: late rows, late_row and watermark firings,
    a window fired twice, a split whose watermark changes twice, idle rows."""
    from event_replay.semantics.reference import replay

    def fits(c):
        if c.cfg.window.type != "tumbling" or c.cfg.replay.end_of_input != "flush" or len(c.rows) < 30:
            return False
        r = replay(c.rows, c.cfg, declared_splits=c.declared_splits)
        reasons = {f.fire_reason for f in r.firings}
        split_changes = pd.Series([w.split for w in r.watermarks if w.scope == "split" and not w.idle])
        return (len(r.late_rows) >= 1 and {"late_row", "watermark"} <= reasons
                and any(f.fire_index >= 1 for f in r.firings) and any(w.idle for w in r.watermarks)
                and (split_changes.value_counts() >= 2).any())
    return _find_seed(fits)


@pytest.fixture(scope="module")
def gx_spark(spark):
    import great_expectations  # noqa: F401  (imported once, before the first validation)
    return spark


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    seed = _base_seed()
    out = tmp_path_factory.mktemp("base") / "out"
    cfg, _ = write_case(random_case(seed), out)
    return seed, cfg, out


def _validate(spark, out: Path, cfg, **kw):
    from event_replay.quality.validation import validate
    return validate(str(out), cfg, spark=spark, **kw)


@pytest.mark.parametrize("wtype,eoi", COMBOS)
def test_reference_outputs_pass_every_expectation(gx_spark, tmp_path, wtype, eoi):
    seed = _combo_seed(wtype, eoi)
    cfg, frames = write_case(random_case(seed), tmp_path / "out")
    docs = (wtype, eoi) == COMBOS[0]
    report = _validate(gx_spark, tmp_path / "out", cfg, build_docs=docs, run_name="first")
    assert report.success, f"seed {seed}: {report.summary()}"
    every = sum(len(s.expectations) for s in load_suites().values())  # each saved expectation, evaluated once
    assert len(report.results) == every and len({r.suite for r in report.results}) == 4
    if docs:
        index = Path(report.docs_index)
        assert index.is_file() and index.parent == tmp_path / "out" / "_data_docs"
        pages = list(index.parent.glob("validations/**/*.html"))
        assert len(pages) == 4
        text = " ".join(p.read_text() for p in pages)
        assert "never goes back in replay order" in text  # the rules' descriptions render
        # The index lists every validation, each naming its data asset and run; a later validation of the same
        # output adds to it (GX builds the index from the results stored with the site).
        assert len(_index_validations(index)) == 4
        assert f"Data asset: windows/ of {tmp_path / 'out'}, one run (not partitioned)" in text
        assert "__none__" not in text and "Data asset: None" not in text
        again = _validate(gx_spark, tmp_path / "out", cfg, suites=["late_events"], run_name="second")
        assert again.docs_index == report.docs_index and len(_index_validations(index)) == 5


def _index_validations(index: Path) -> list[str]:
    """The validation pages GX's index lists (its table rows are data for bootstrap-table)."""
    import re

    return re.findall(r"'_table_row_link_path': '(validations/[^']+)'", index.read_text())


# -- breaks: each returns the suite to run and the expectation that must fail ------------------------------------

def _ms(ts) -> int:
    return int(pd.Timestamp(ts).value // 1_000_000)


def _ts(ms: int):
    return pd.Timestamp(ms, unit="ms", tz="UTC")


def watermark_goes_back(f, cfg):
    wm = f["watermarks"]
    ok = wm[(wm.scope == "split") & ~wm.idle]
    split = ok.split.value_counts().index[0]
    rows = ok[ok.split == split].sort_values("replay_time_ms")
    first, later = rows.index[0], rows.index[-1]
    wm.loc[later, "watermark_ms"] = wm.loc[first, "watermark_ms"] - 1
    wm.loc[later, "watermark"] = _ts(wm.loc[first, "watermark_ms"] - 1)
    return "watermarks", "expect_watermark_non_decreasing"


def idle_row_with_watermark(f, cfg):
    wm = f["watermarks"]
    i = wm.index[wm.idle][0]
    wm.loc[i, "watermark_ms"] = 1000
    wm.loc[i, "watermark"] = _ts(1000)
    return "watermarks", "expect_watermark_null_iff_idle"


def duplicated_firing(f, cfg):
    w = f["windows"]
    late = w[w.fire_reason == "late_row"].index[0]  # a late_row firing: only the duplicate is wrong
    f["windows"] = pd.concat([w, w.loc[[late]]])
    return "windows", "expect_firings_unique"


def fire_index_gap(f, cfg):
    w = f["windows"]
    i = w.fire_index.idxmax()
    w.loc[i, "fire_index"] += 1
    return "windows", "expect_fire_index_contiguous"


def watermark_firing_before_end(f, cfg):
    w = f["windows"]
    i = w.index[w.fire_reason == "watermark"][0]
    w.loc[i, "fire_watermark"] = _ts(_ms(w.loc[i, "window_end"]) - 2)
    return "windows", "expect_watermark_firings_after_window_end"


def late_firing_after_lateness(f, cfg):
    w = f["windows"]
    i = w.index[w.fire_reason == "late_row"][0]
    w.loc[i, "fire_watermark"] = _ts(_ms(w.loc[i, "window_end"]) - 1 + cfg.window.allowed_lateness_ms)
    return "windows", "expect_late_row_firings_within_lateness"


def late_firing_before_the_first(f, cfg):
    w = f["windows"]
    twice = w[w.fire_index >= 1].iloc[0]
    same = w[(w.key == twice.key) & (w.window_start == twice.window_start) & (w.window_end == twice.window_end)]
    i = same.index[same.fire_index == same.fire_index.max()][0]
    w.loc[i, "fire_watermark"] = _ts(_ms(twice.window_end) - 1)  # still inside lateness, but before firing 0
    w.loc[i, "fire_reason"] = "late_row"
    w.loc[same.index[same.fire_index == 0][0], "fire_watermark"] = _ts(_ms(twice.window_end) + 10)
    w.loc[same.index[same.fire_index == 0][0], "fire_reason"] = "watermark"
    return "windows", "expect_firings_in_watermark_order"


def missing_window(f, cfg):
    w = f["windows"]
    first = w.iloc[0]
    same = (w.key == first.key) & (w.window_start == first.window_start) & (w.window_end == first.window_end)
    f["windows"] = w[~same]
    return "accounting", "expect_no_window_left_open"


def row_counted_nowhere(f, cfg):
    f["counts"].loc[0, "rows_read"] += 1
    return "accounting", "expect_every_row_accounted_for"


def late_row_dropped(f, cfg):
    f["late_events"] = f["late_events"].iloc[1:]
    return "accounting", "expect_late_count_matches_late_events"


def quarantine_row_dropped(f, cfg):
    f["quarantine"] = f["quarantine"].iloc[1:]
    return "accounting", "expect_quarantine_count_matches"


def late_row_not_late(f, cfg):
    from event_replay.semantics.windows import assign

    late = f["late_events"]
    i = late.index[0]
    t = _ms(late.loc[i, "event_time"] if cfg.window.time == "event" else late.loc[i, "arrival_time"])
    latest_end = max(end for _, end in assign(t, cfg.window))
    late.loc[i, "late_watermark"] = _ts(latest_end - 1 + cfg.window.allowed_lateness_ms - 1)
    return "late_events", "expect_late_rows_past_lateness"


BREAKS = [watermark_goes_back, idle_row_with_watermark, duplicated_firing, fire_index_gap,
          watermark_firing_before_end, late_firing_after_lateness, late_firing_before_the_first, missing_window,
          row_counted_nowhere, late_row_dropped, quarantine_row_dropped, late_row_not_late]


@pytest.mark.parametrize("brk", BREAKS, ids=lambda b: b.__name__)
def test_each_rule_fails_on_a_broken_output(gx_spark, base, tmp_path, brk):
    seed, cfg, good = base
    frames = read_frames(good)
    suite, expected = brk(frames, cfg)
    out = tmp_path / "out"
    write_frames(out, frames, like=good)
    report = _validate(gx_spark, out, cfg, suites=[suite], build_docs=False)
    assert not report.success
    assert expected in report.failed_names(), f"seed {seed}: {report.summary()}"
    failed = next(r for r in report.failed if r.name == expected)
    assert failed.description and failed.observed and failed.unexpected_sample  # the broken rule, with evidence


def test_the_base_case_passes_the_suites_the_breaks_use(gx_spark, base):
    seed, cfg, good = base
    report = _validate(gx_spark, good, cfg, build_docs=False)
    assert report.success, f"seed {seed}: {report.summary()}"


def test_a_having_keeps_the_indexes_and_rows_of_the_firings_it_drops(gx_spark, base, tmp_path):
    """With a `having` a window's earlier firing may be dropped (its index kept: a gap) and all of a window's firings
    may be (its rows are still in windows): both pass then, and the same outputs fail without it."""
    from event_replay.semantics.config import parse_config, to_raw

    seed, cfg, good = base
    frames = read_frames(good)
    fire_index_gap(frames, cfg)
    missing_window(frames, cfg)
    out = tmp_path / "out"
    write_frames(out, frames, like=good)
    raw = to_raw(cfg)
    raw["having"] = f"{next(iter(cfg.aggregations))} IS NOT NULL"
    report = _validate(gx_spark, out, parse_config(raw), suites=["windows", "accounting"], build_docs=False)
    assert report.success, f"seed {seed}: {report.summary()}"
    report = _validate(gx_spark, out, cfg, suites=["windows", "accounting"], build_docs=False)
    assert {"expect_fire_index_contiguous", "expect_no_window_left_open"} <= report.failed_names()
