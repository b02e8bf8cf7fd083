"""The expectation suites, saved as JSON under expectations/suites/ and loaded from there for every validation.

`build_suites()` is the source of the saved files (`scripts/build_suites.py` rewrites them);
`load_suites()` imports the custom expectations first (so GX knows their types), then loads each saved suite and
refuses one that comes back with fewer expectations than its file lists (GX drops an expectation whose type it
does not know with only a log line, which would make a broken suite pass).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import great_expectations as gx

from . import expectations as ex  # registers the custom expectation types before any suite is loaded

SUITE_NAMES = ("windows", "watermarks", "late_events", "accounting")
# The row accounting's figures, as Data Docs show them: each a column of the accounting batch whose sum (its one
# row) is the expectation's observed value, the same figure the why-report, the run report and the runs page show.
FIGURES = {"rows_read": "rows read", "rows_in_windows": "rows in windows", "late_rows": "late rows",
           "quarantined_rows": "quarantined rows", "skipped_rows": "skipped rows", "filtered_rows": "filtered rows",
           "firings": "firings", "windows": "windows"}
# Beside them, run only where `replay compare` left a comparison (compare/partitions.parquet): quality/parity.py.
LIVE_PARITY = "live_parity"
EXPECTATIONS_DIR_ENV = "EVENT_REPLAY_EXPECTATIONS_DIR"


class SuiteError(RuntimeError):
    pass


def expectations_dir() -> Path:
    """expectations/ at the repository root, or $EVENT_REPLAY_EXPECTATIONS_DIR."""
    env = os.environ.get(EXPECTATIONS_DIR_ENV)
    return Path(env) if env else Path(__file__).resolve().parents[3] / "expectations"


def _custom(cls) -> gx.expectations.Expectation:
    return cls(unexpected_rows_query=cls.QUERY, description=cls.DESCRIPTION)


def build_suites() -> dict[str, gx.ExpectationSuite]:
    E = gx.expectations
    windows = [E.ExpectTableColumnsToMatchSet(
        column_set=["key", "window_start_ms", "window_end_ms", "fire_index", "fire_watermark_ms", "fire_reason"],
        exact_match=False, description="windows/ has the firing columns (docs/semantics.md: Outputs).")]
    windows += [_custom(c) for c in ex.WINDOWS]
    watermarks = [E.ExpectTableColumnsToMatchSet(
        column_set=["replay_time_ms", "scope", "split", "watermark_ms", "idle"], exact_match=False,
        description="watermarks/ has replay_time, scope, split, watermark, idle (docs/semantics.md: Outputs).")]
    watermarks += [_custom(c) for c in ex.WATERMARKS]
    late = [E.ExpectTableColumnsToMatchSet(
        column_set=["split", "offset", "time_ms", "late_watermark_ms"], exact_match=False,
        description="late_events/ has the row's split, offset, time and late_watermark.")]
    late += [_custom(c) for c in ex.LATE_EVENTS]
    accounting = [E.ExpectTableRowCountToEqual(
        value=1, description="The accounting batch is one row (counts/ joined with the other outputs' sizes).")]
    accounting += [_custom(c) for c in ex.ACCOUNTING]
    accounting += [E.ExpectColumnSumToBeBetween(
        column=column, min_value=0, description=f"Figure: {label} (the observed value; never negative).")
        for column, label in FIGURES.items()]
    parity = [E.ExpectTableColumnsToMatchSet(
        column_set=["partition", "windows", "agreement_pct", "min_agreement_pct"], exact_match=False,
        description="compare/partitions has a row per partition with its windows compared and agreement.")]
    parity += [_custom(c) for c in ex.LIVE_PARITY]
    exps = {"windows": windows, "watermarks": watermarks, "late_events": late, "accounting": accounting,
            LIVE_PARITY: parity}
    return {name: gx.ExpectationSuite(name=f"replay_{name}", expectations=exps[name],
                                      meta={"dataset": "compare" if name == LIVE_PARITY else name, "engine": "spark"})
            for name in (*SUITE_NAMES, LIVE_PARITY)}


def suite_path(name: str, root: Path | None = None) -> Path:
    return (root or expectations_dir()) / "suites" / f"replay_{name}.json"


def save_suites(root: Path | None = None) -> list[Path]:
    paths = []
    for name, suite in build_suites().items():
        path = suite_path(name, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        d = suite.to_json_dict()
        d.pop("id", None)  # ids are assigned when a context stores the suite
        path.write_text(json.dumps(d, indent=2, sort_keys=True) + "\n")
        paths.append(path)
    return paths


def load_suite(name: str, root: Path | None = None) -> gx.ExpectationSuite:
    path = suite_path(name, root)
    if not path.is_file():
        raise SuiteError(f"suite file {path} is missing")
    raw = json.loads(path.read_text())
    listed = raw.get("expectations") or []
    suite = gx.ExpectationSuite(name=raw["name"], expectations=listed, meta=raw.get("meta"), notes=raw.get("notes"))
    if not suite.expectations or len(suite.expectations) != len(listed):
        raise SuiteError(f"suite {path} loaded {len(suite.expectations)} of {len(listed)} expectations "
                         "(an unknown expectation type? the custom ones are in event_replay.quality.expectations)")
    return suite


def load_suites(root: Path | None = None) -> dict[str, gx.ExpectationSuite]:
    return {name: load_suite(name, root) for name in SUITE_NAMES}
