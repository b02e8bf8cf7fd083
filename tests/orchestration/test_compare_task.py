"""The backfill DAG's optional compare_live task, without Airflow running: the job's arguments from the form and the
plan, the calibration it reads, and the status it returns."""
from __future__ import annotations

from pathlib import Path

import pytest

from backfill_cases import RunTI
from event_replay.orchestration.compare_task import CompareLiveOperator, compare_args, compare_result

ROOT = Path(__file__).resolve().parents[2]


def test_compare_args_from_the_form(tmp_path):
    plan = {"plan": {"runs": [{"partition": "2024-01-01"}, {"partition": "2024-01-03"}]},
            "run_dir": str(tmp_path / "run"), "config_path": "/x/job.yaml"}
    params = {"live_path": "jobs/live/demo/firings", "live_format": "json", "live_columns": " key=key_id ",
              "live_late_path": "", "live_keeps_updates": True, "live_min_agreement": 95,
              "calibrate_idle_timeout": "5s,30s", "calibrate_max_out_of_orderness": None}
    args, summary = compare_args(plan, params, "/proj")
    assert args[:4] == ["compare", "--config", "/x/job.yaml", "--live"] and args[4] == "/proj/jobs/live/demo/firings"
    assert args[args.index("--partitions") + 1] == "2024-01-01..2024-01-03"
    assert args[args.index("--live-columns") + 1] == "key=key_id" and "--live-late" not in args
    assert "--live-keeps-updates" in args and "--report-only" in args
    assert args[args.index("--min-agreement") + 1] == "95.0"
    assert "--search-settings" in args and not any(a.startswith("--calibrat") for a in args)  # calibrate's own
    assert summary == (tmp_path / "run").resolve() / "compare" / "summary.json"
    assert args[args.index("--out") + 1] == str(summary.parent)
    assert "--quality-out" not in args  # the data-quality check is the data_quality task's own job
    # after a calibrate task that ranked a grid, the settings search reads its ranking instead of replaying it
    with_grid, _ = compare_args(plan, params, "/proj", calibration="/out/_tuning/g")
    assert with_grid == args + ["--calibration", "/out/_tuning/g"]


def test_the_comparison_runs_after_a_failed_calibration_not_after_a_failed_replay(tmp_path):
    """Trigger rule all_done (steps.py): a failed calibrate task leaves the comparison to run, without the
    calibration's folder (a failed task returned none); a replay that did not succeed skips it."""
    from airflow.sdk.exceptions import AirflowSkipException

    op = CompareLiveOperator(task_id="compare_live", plan_task_id="plan", project_dir=str(ROOT))
    assert op.trigger_rule == "all_done" and op.step == "comparison with live"
    ran = RunTI({"replay_partitions": ("success", 20.0), "calibrate": ("failed", 3.0)})
    assert op.execute({"ti": ran, "params": {"live_path": None}}) == {"status": "not run (no live path in the form)"}
    failed = RunTI({"replay_partitions": ("failed", 20.0), "calibrate": ("upstream_failed", None)})
    with pytest.raises(AirflowSkipException, match="replay_partitions ended failed"):
        op.execute({"ti": failed, "params": {"live_path": "/live"}})


def test_compare_result_status():
    s = {"totals": {"agreement_pct": 97.5, "windows": 400, "differing": 10, "duplicate": 2, "late_matched": 5,
                    "late_replay_only": 3, "late_live_only": 0}, "page": "/p/index.html"}
    r = compare_result(s)
    assert r["status"] == ("agreement 97.50% of 400 windows (10 differing, 2 duplicated; late rows 3 replay only, "
                           "0 live only)")
    assert r["agreement_pct"] == 97.5 and r["compare_page"] == "/p/index.html"


def test_runs_page_agreement_cell(tmp_path):
    """The Replay runs page reads the agreement of a run's compare/summary.json (the compare_live task's)."""
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "plugins"))
    from replay_runs.artifacts import live_agreement

    assert live_agreement(tmp_path) is None
    (tmp_path / "compare").mkdir()
    (tmp_path / "compare" / "summary.json").write_text(json.dumps(
        {"totals": {"agreement_pct": 98.25, "windows": 400, "differing": 7}, "min_agreement_pct": 99.0}))
    a = live_agreement(tmp_path)
    assert (a.pct, a.min_pct, a.windows, a.differing, a.ok) == (98.25, 99.0, 400, 7, False)


def test_live_parity_suite_is_saved_and_loads_complete():
    import json

    from event_replay.quality.suites import LIVE_PARITY, build_suites, load_suite, suite_path

    built, saved = build_suites()[LIVE_PARITY], load_suite(LIVE_PARITY)
    a, b = built.to_json_dict(), saved.to_json_dict()
    a.pop("id", None), b.pop("id", None)
    assert a == b, "expectations/suites/replay_live_parity.json is stale: python scripts/build_suites.py"
    assert [e["type"] for e in json.loads(suite_path(LIVE_PARITY).read_text())["expectations"]] == \
        ["expect_table_columns_to_match_set", "expect_live_agreement_per_partition"]
    assert len(saved.expectations) == 2
