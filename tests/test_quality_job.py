"""`replay quality` (quality_job.py): the GX suites and the why-report on one output, in one Spark session, into
the run's folder; the outcome as data_quality.json, written whole (the Airflow task's side: orchestration/
test_operators.py)."""
from __future__ import annotations

import json

import pytest

from event_replay.quality.prepare import OutputsMissing
from event_replay.quality_job import announce, main_quality, run_quality, write_result
from event_replay.semantics.config_keys import ConfigError
from quality_outputs import case_config, write_case
from strategies import random_case


def _case():
    """A generated case that fires a few windows (every suite then has rows to check)."""
    from event_replay.semantics.reference import replay

    for seed in range(3000):
        c = random_case(seed)
        fired = replay(c.rows, c.cfg, declared_splits=c.declared_splits).firings
        if c.cfg.window.type == "tumbling" and len(fired) >= 3:
            return c
    raise AssertionError("no generated case fits")


@pytest.mark.spark
@pytest.mark.timeout(600)
def test_suites_and_why_report_go_into_the_run_folder(spark, tmp_path):
    cfg, _ = write_case(_case(), tmp_path / "out")
    run = tmp_path / "run"
    run.mkdir()
    result = run_quality(cfg, run, run_name="manual__q", spark=spark)
    assert result["success"] and result["expectations"] > 0 and result["failed"] == 0, result
    assert result["failed_names"] == [] and result["output_path"] == cfg.output.path
    assert result["data_docs"] == str(run.resolve() / "_data_docs" / "index.html")
    assert result["why_report"] == str(run.resolve() / "why_report" / "index.html")
    assert (run / "_data_docs" / "index.html").is_file() and (run / "why_report" / "summary.json").is_file()
    assert not (tmp_path / "out" / "_data_docs").exists()  # the run's folder, not the output's
    assert "OK" in result["summary"]
    assert not spark.sparkContext._jsc.sc().isStopped()  # a session given is the caller's: left running


@pytest.mark.spark
def test_no_outputs_is_outputs_missing(spark, tmp_path):
    cfg = case_config(_case(), tmp_path / "never_written")
    with pytest.raises(OutputsMissing):
        run_quality(cfg, tmp_path, spark=spark)


def test_a_bad_config_is_refused_before_the_folder_or_spark(tmp_path):
    bad = tmp_path / "job.yaml"
    bad.write_text("source: {path: x}\nwindow: {type: tumbling, size: 0s}\nwatermark: {max_out_of_orderness: 1s}\n"
                   "aggregations: {cnt: count(*)}\noutput: {path: y}\n")
    with pytest.raises(ConfigError):
        main_quality(str(bad), str(tmp_path / "run"))
    assert not (tmp_path / "run").exists()


def test_the_result_file_is_replaced_whole_and_announced(tmp_path, capsys):
    first = write_result({"success": True, "summary": "validate: OK", "why_report": "w/index.html"}, tmp_path)
    second = write_result({"success": False, "summary": "validate: FAILED 1/3", "why_report": "w/index.html"},
                          tmp_path)
    assert first == second == tmp_path / "data_quality.json"
    assert json.loads(second.read_text()) == {"success": False, "summary": "validate: FAILED 1/3",
                                              "why_report": "w/index.html"}
    assert [p.name for p in tmp_path.iterdir()] == ["data_quality.json"]  # no temporary file left
    announce(json.loads(second.read_text()), second, who="replay quality")
    assert capsys.readouterr().out == (f"validate: FAILED 1/3\nwhy-report: w/index.html\n"
                                       f"replay quality: result -> {second}\n")


def test_the_job_imports_gx_and_matplotlib_beside_the_session_start_not_before():
    """quality_job's own import leaves GX and matplotlib (seconds of imports) to run_quality, which imports them in
    a thread while the JVM starts the session; imported at the top, they would come before it again."""
    import subprocess
    import sys

    code = ("import sys, event_replay.quality_job; "
            "print(sorted(m for m in ('great_expectations', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
