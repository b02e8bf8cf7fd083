"""The backfill DAG's optional compare_live task, without Airflow running: the job's arguments from the form and the
plan, and the status it returns."""
from __future__ import annotations

from event_replay.orchestration.compare_task import compare_args, compare_result


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
    assert args[args.index("--calibrate-idle-timeout") + 1] == "5s,30s"
    assert "--calibrate-max-out-of-orderness" not in args
    assert summary == (tmp_path / "run").resolve() / "compare" / "summary.json"
    assert args[args.index("--out") + 1] == str(summary.parent)
    assert "--quality-out" not in args
    # The data-quality check in the same Spark application: into the run folder, named by the run id.
    args, _ = compare_args(plan, params, "/proj", quality_run="manual__1")
    assert args[args.index("--quality-out") + 1] == str((tmp_path / "run").resolve())
    assert args[args.index("--quality-run-name") + 1] == "manual__1"


def test_data_quality_takes_the_result_of_compare_live_on_its_first_try(tmp_path):
    """compare_live's Spark job ran the check (its result names the file): the data_quality task reads it instead
    of submitting the check again; on a retry, or without that result, it submits its own."""
    import json
    from types import SimpleNamespace

    from event_replay.orchestration.operators import QUALITY_KEY, DataQualityOperator

    run = tmp_path / "run"
    run.mkdir()
    result_file = run.resolve() / "data_quality.json"
    docs, why = str(run / "_data_docs" / "index.html"), str(run / "why_report" / "index.html")
    result = {"success": True, "expectations": 12, "failed": 0, "failed_names": [], "data_docs": docs,
              "why_report": why}
    planned = {"plan": {"runs": [{"partition": "2024-01-01"}]}, "run_dir": str(run), "config_path": "/x/job.yaml",
               "dq_warn_only": False}
    op = DataQualityOperator(task_id="data_quality", plan_task_id="plan", project_dir="/proj",
                             compare_task_id="compare_live")
    submitted = []

    def submit(context, args):
        submitted.append(args)
        result_file.write_text(json.dumps({**result, "expectations": 13}))

    op.submit = submit

    def context(try_number, compared):
        xcoms = {"plan": planned, "compare_live": compared}
        ti = SimpleNamespace(xcom_pull=lambda task_ids: xcoms[task_ids], try_number=try_number)
        return {"ti": ti, "params": {"run_data_quality": True}, "run_id": "manual__1"}

    result_file.write_text(json.dumps(result))
    compared = {"status": "agreement 100.00%", QUALITY_KEY: str(result_file)}
    assert op.execute(context(1, compared)) == {"status": "passed (12 expectations)", "data_docs": docs,
                                                "why_report": why}
    assert submitted == []
    assert op.execute(context(2, compared))["status"] == "passed (13 expectations)"  # a retry checks again
    assert submitted == [["quality", "--config", "/x/job.yaml", "--out", str(run.resolve()), "--run-name",
                          "manual__1"]]
    result_file.write_text(json.dumps(result))
    assert op.execute(context(1, {"status": "not run (no live path in the form)"}))["status"] == \
        "passed (13 expectations)"
    assert len(submitted) == 2


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
    from replay_runs.runs import live_agreement

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
