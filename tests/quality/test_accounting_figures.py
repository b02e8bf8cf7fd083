"""The row accounting's figures Data Docs show (issue 48): the accounting batch carries firings and windows beside
counts/'s columns, and the accounting suite has one expectation per figure whose observed value is that figure (a
column sum over the batch's one row). The browser check against the other pages: tests/test_pages_agree.py."""
from __future__ import annotations

import pytest

from event_replay.quality.prepare import prepare
from event_replay.quality.suites import FIGURES, load_suite
from event_replay.semantics.reference import replay
from quality_outputs import write_case
from strategies import random_case


def test_the_accounting_suite_shows_every_figure():
    suite = load_suite("accounting")
    shown = {e.column: e.description for e in suite.expectations if e.expectation_type == "expect_column_sum_to_be_between"}
    assert set(shown) == set(FIGURES)
    assert all(d.startswith(f"Figure: {FIGURES[c]} (") for c, d in shown.items()), shown


@pytest.mark.spark
def test_the_accounting_batch_counts_firings_and_windows(spark, tmp_path):
    case = next(c for c in map(random_case, range(3000)) if c.cfg.window.allowed_lateness_ms > 0
                and len(replay(c.rows, c.cfg, declared_splits=c.declared_splits).late_rows) >= 1)
    cfg, tables = write_case(case, tmp_path / "out")
    acc = prepare(spark, str(tmp_path / "out"), cfg).accounting.first().asDict()
    w = tables["windows"]
    windows = len(w[["key", "window_start", "window_end"]].astype(str).drop_duplicates())
    assert (acc["firings"], acc["windows"]) == (len(w), windows)
    assert set(FIGURES) <= set(acc)
