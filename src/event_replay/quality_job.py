"""`replay quality`: the data-quality step of a DAG run as one Spark job, where the outputs are.

The GX suites (`replay validate`'s `validate`) and the why-report side by side in one Spark session, both written
into one folder (the Airflow run's: `_data_docs/`, `why_report/`), and the outcome as `data_quality.json` there:

    {"success": true, "expectations": 12, "failed": 0, "failed_names": [], "data_docs": ".../_data_docs/index.html",
     "why_report": ".../why_report/index.html", "output_path": "...", "summary": "validate ...: OK (...)",
     "spark_jobs": {"gx_suites": 3, "why_report": 4}}

The Airflow task (orchestration/operators.py DataQualityOperator) submits this job through the `replay_spark`
connection and pool (jobs/replay_job.py quality ...) and reads only that file: the worker never loads the outputs.
The exit code says whether the check ran (0, whatever the expectations say: the JSON does), not whether it passed
(`replay validate` exits 1 on a failed expectation); 1 when the outputs are missing or it failed, 2 a bad config.
"""
from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

from . import engine
from .io.files import input_bytes
from .layout import DATA_QUALITY_FILE, DOCS_FOLDER, WHY_FOLDER
from .quality.prepare import OutputsMissing
from .semantics.config import JobConfig, load_config
from .spark import build_session
from .spark_jobs import counted, one_job_plans


def run_quality(cfg: JobConfig, folder: str | Path, run_name: str | None = None, spark=None,
                suites: Sequence[str] | None = None) -> dict[str, Any]:
    """The suites (Data Docs in `<folder>/_data_docs/`; all, or `suites`) and the why-report (`<folder>/why_report/`)
    on the outputs of `cfg`, in one Spark session (the one given, else spark-submit's); returns what
    `DATA_QUALITY_FILE` holds."""
    folder = Path(folder).resolve()
    own = spark is None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="gx") as pool:
        # GX and matplotlib take seconds to import, the JVM seconds to start the session: both at once (the
        # session's start waits on the JVM, which leaves the interpreter to the import).
        imported = pool.submit(_reports)
        if own:
            spark = build_session(app_name="event-replay-dq", input_bytes=input_bytes(cfg.output.path))
        try:
            validate, why_report = imported.result()
            return _run(spark, pool, validate, why_report, cfg, folder, run_name, suites)
        finally:
            if own:
                spark.stop()


def _reports():
    """The two reports' functions; their modules import GX (validation) and matplotlib (why-report)."""
    from .quality.validation import validate  # lazy: imported beside the session's start (run_quality)
    from .why.report import why_report  # lazy: likewise
    return validate, why_report


def _run(spark, pool: ThreadPoolExecutor, validate, why_report, cfg: JobConfig, folder: Path, run_name: str | None,
         suites: Sequence[str] | None) -> dict[str, Any]:
    engine.fixed_plans(spark)  # the replay's plans: no re-planning at run time, a Spark job per stage (BENCHMARKS.md)
    # Side by side in one session: on a small output both are bound by Spark's per-job overhead, which overlaps.
    # The why-report is written also when an expectation fails: it explains. Both plan inside one_job_plans, whose
    # settings are the session's, not a thread's: set here for both, the report that ends first restores them to
    # these, not Spark's defaults under the other (whose queries then broadcast: 3 to 6 why-report jobs a run).
    with one_job_plans(spark):
        checked = pool.submit(_counted, spark, "gx_suites", validate, cfg.output.path, cfg,
                              docs_dir=str(folder / DOCS_FOLDER), spark=spark, run_name=run_name, suites=suites)
        why, why_jobs = _counted(spark, "why_report", why_report, cfg.output.path, cfg, spark=spark,
                                 report_dir=folder / WHY_FOLDER)
        report, gx_jobs = checked.result()
    return {"success": report.success, "expectations": len(report.results), "failed": len(report.failed),
            "failed_names": sorted(report.failed_names()), "data_docs": report.docs_index,
            "why_report": why if "://" in why else str(Path(why).resolve()), "output_path": cfg.output.path,
            "summary": report.summary(), "spark_jobs": {"gx_suites": gx_jobs, "why_report": why_jobs}}


def _counted(session, step: str, func, *args, **kwargs):
    """func's result and the Spark jobs it ran (spark_jobs.py: per thread, so the two steps side by side apart)."""
    with counted(session, step) as jobs:
        result = func(*args, **kwargs)
    return result, jobs.jobs


def write_result(result: dict[str, Any], folder: str | Path) -> Path:
    """`<folder>/data_quality.json`, replaced whole (a reader never sees half of it)."""
    target = Path(folder, DATA_QUALITY_FILE)
    tmp = target.with_name(f".{DATA_QUALITY_FILE}.tmp")
    tmp.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    tmp.replace(target)
    return target


def main_quality(config_path: str, out_dir: str, run_name: str | None = None) -> int:
    """For `replay quality --config FILE --out DIR [--run-name ID]`."""
    cfg = load_config(config_path)  # a bad config is refused before Spark starts (exit 2)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    try:
        result = run_quality(cfg, out_dir, run_name=run_name)
    except OutputsMissing as exc:
        print(f"replay quality: {exc}", file=sys.stderr)
        return 1
    announce(result, write_result(result, out_dir))
    return 0


def announce(result: dict[str, Any], path: Path, who: str = "replay quality") -> None:
    """What the job prints once the result is written: the suites' summary, where both reports are."""
    print(f"{result['summary']}\nwhy-report: {result['why_report']}\n{who}: result -> {path}", flush=True)
