"""`validate`: every saved suite through a GX checkpoint on a replay's outputs, with Data Docs.

GX runs on its Spark datasource (the outputs can be large, and the ordered and cross-row rules are Spark-SQL
`UnexpectedRowsExpectation`s, which GX's pandas datasource does not run). The GX context is ephemeral (the suites
come from expectations/suites/*.json) but for its validation results: with Data Docs they are stored as JSON in
the site's `results/` folder, because GX builds the site's index from the stored results. So the index lists every
validation of that site, also those of an earlier `replay validate` of the same output. The site goes by default
into `<output.path>/_data_docs/` (next to why_report/), so the docs live and are replaced with the output they
describe. Data Docs need a local filesystem path.

The rules (the custom expectations) are evaluated together before the checkpoints run: every saved query of every
suite in one Spark job (findings.py), which GX's validation of each expectation then reads; GX's own metrics (the
row count and the figures' sums of the accounting suite) are its own, bundled per batch. The suites are three
Spark jobs on the demo, whatever the number of partitions (45 when GX ran each query itself).

Each result names its data asset (the output dataset, the output folder and the partition range) and its run
(the Airflow run id): GX's Spark dataframe batches carry neither, so both are set on the result before it is
stored, and the site is built from the stored results afterwards.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import great_expectations as gx
from great_expectations.core.run_identifier import RunIdentifier
from great_expectations.data_context.types.base import (DataContextConfig, InMemoryStoreBackendDefaults,
                                                        ProgressBarsConfig)
from great_expectations.data_context.types.resource_identifiers import ExpectationSuiteIdentifier

from ..io.files import input_bytes
from ..layout import DOCS_FOLDER
from ..semantics.config import JobConfig, load_config
from ..spark import build_session
from ..spark_jobs import one_job_plans
from . import quiet_gx
from .docs_assets import localize
from .expectations import ReplayRuleExpectation
from .findings import pin_findings
from .parity import live_parity_batch
from .prepare import OutputsMissing, prepare
from .suites import LIVE_PARITY, SUITE_NAMES, load_suite, load_suites

SITE_NAME = "event_replay"
UNEXPECTED_SAMPLE = 20


@dataclass(frozen=True)
class ExpectationOutcome:
    suite: str
    name: str  # the expectation type, e.g. expect_watermark_non_decreasing
    description: str
    success: bool
    observed: Any = None  # unexpected row count (or the observed value of a built-in expectation)
    unexpected_sample: tuple[dict, ...] = ()
    error: str | None = None  # GX raised while evaluating it (counted as a failure)


@dataclass
class ValidationReport:
    success: bool
    output_path: str
    docs_dir: str | None
    results: list[ExpectationOutcome] = field(default_factory=list)

    @property
    def failed(self) -> list[ExpectationOutcome]:
        return [r for r in self.results if not r.success]

    def failed_names(self) -> set[str]:
        return {r.name for r in self.failed}

    @property
    def docs_index(self) -> str | None:
        return str(Path(self.docs_dir, "index.html")) if self.docs_dir else None

    def summary(self) -> str:
        lines = [f"validate {self.output_path}: {'OK' if self.success else 'FAILED'} "
                 f"({len(self.results) - len(self.failed)}/{len(self.results)} expectations passed)"]
        for r in self.failed:
            lines.append(f"  FAILED {r.suite}/{r.name} (observed {r.observed}): {r.description}"
                         + (f" [error: {r.error}]" if r.error else ""))
        if self.docs_dir:
            lines.append(f"  Data Docs: {self.docs_index}")
        return "\n".join(lines)


def default_docs_dir(output_path: str) -> str:
    # Absolute: GX's filesystem store refuses a relative base directory (configs may give relative paths).
    docs = Path(output_path.rstrip("/"), DOCS_FOLDER)
    return str(docs) if "://" in output_path else str(docs.resolve())


def run_identifier(run_name: str | None):
    return RunIdentifier(run_name=run_name) if run_name else None


RESULTS_FOLDER = "results"
# What each suite validates, for the "Data asset" GX shows on a result and in the index.
SUITE_DATASETS = {"windows": "windows/", "watermarks": "watermarks/", "late_events": "late_events/",
                  "accounting": "counts/ against every output", "live_parity": "compare/ (replay vs live)"}


def _context(docs_dir: str | None):
    """In memory, but for the validation results of a Data Docs site (JSON under <docs_dir>/results/).

    No progress bars: GX's tqdm "Calculating Metrics" bars redraw with carriage returns, which a task log (a file)
    keeps as one long line per suite."""
    config = DataContextConfig(store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
                               progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False))
    if docs_dir:
        config.stores[config.validation_results_store_name] = {
            "class_name": "ValidationResultsStore",
            "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                              "base_directory": str(Path(docs_dir, RESULTS_FOLDER))}}
        config.data_docs_sites = {SITE_NAME: {
            "class_name": "SiteBuilder",
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": docs_dir}}}
    return gx.get_context(project_config=config)


def asset_name(suite: str, output_path: str, partitions: Sequence[str]) -> str:
    """e.g. `windows/ of /data/out/demo, partitions 2024-01-01..2024-01-03 (3)`."""
    scope = ("one run (not partitioned)" if not partitions else f"partition {partitions[0]}" if len(partitions) == 1
             else f"partitions {partitions[0]}..{partitions[-1]} ({len(partitions)})")
    return f"{SUITE_DATASETS.get(suite, suite)} of {output_path.rstrip('/')}, {scope}"


def _store_named(ctx, run, name: str) -> list:
    """Store each result of a checkpoint run with its data asset named; returns the stored keys."""
    keys = []
    for key, vr in run.run_results.items():
        vr.meta["batch_spec"] = {**(vr.meta.get("batch_spec") or {}), "data_asset_name": name}
        ctx.validation_results_store.set(key, vr)
        keys.append(key)
    return keys


def _outcomes(suite: str, validation_result) -> list[ExpectationOutcome]:
    out = []
    for r in validation_result.results:
        cfg = r.expectation_config
        res = r.result or {}
        details = res.get("details") or {}
        sample = tuple(dict(row) for row in (details.get("unexpected_rows") or [])[:UNEXPECTED_SAMPLE])
        exc = r.exception_info or {}
        error = exc.get("exception_message") if exc.get("raised_exception") else None
        out.append(ExpectationOutcome(suite=suite, name=cfg.type, description=cfg.description or cfg.type,
                                      success=bool(r.success) and error is None, observed=res.get("observed_value"),
                                      unexpected_sample=sample, error=error))
    return out


def validate(output_path: str, cfg: JobConfig, docs_dir: str | None = None, *, spark=None,
             suites: Sequence[str] | None = None, build_docs: bool = True,
             run_name: str | None = None) -> ValidationReport:
    """Run the saved suites (all, or `suites`) on the outputs under `output_path` through GX checkpoints.

    Data Docs go to `docs_dir` (default `<output_path>/_data_docs/`); `build_docs=False` skips them. `run_name`
    (the Airflow run id) names the run in the Data Docs instead of GX's "__none__"."""
    quiet_gx()  # again: REPLAY_GX_LOG_LEVEL as it is now

    if spark is None:
        spark = build_session(app_name="event-replay-validate", input_bytes=input_bytes(output_path))
    with one_job_plans(spark):  # GX plans (and persists) its batches at each check: no broadcast jobs
        return _validate(spark, output_path, cfg, docs_dir, suites, build_docs, run_name)


def _validate(spark, output_path: str, cfg: JobConfig, docs_dir: str | None, suites: Sequence[str] | None,
              build_docs: bool, run_name: str | None) -> ValidationReport:
    names = list(suites or SUITE_NAMES)
    saved = load_suites()  # imports the custom expectations, refuses a suite that lost expectations
    docs = (docs_dir or default_docs_dir(output_path)) if build_docs else None
    if docs:
        Path(docs).mkdir(parents=True, exist_ok=True)
    prepared = prepare(spark, output_path, cfg)
    where = output_path if "://" in output_path else str(Path(output_path).resolve())
    batches = prepared.by_suite()

    parity = live_parity_batch(spark, docs or default_docs_dir(output_path)) \
        if suites is None or LIVE_PARITY in suites else None
    names = [n for n in names if n != LIVE_PARITY] + ([LIVE_PARITY] if parity is not None else [])
    if parity is not None:
        batches, saved = {**batches, LIVE_PARITY: parity}, {**saved, LIVE_PARITY: load_suite(LIVE_PARITY)}
    ctx = _context(docs)
    # The batches are persisted here, not by GX (persist=False): the rules' findings read them first.
    source = ctx.data_sources.add_spark("replay_outputs", persist=False)
    results: list[ExpectationOutcome] = []
    stored = []
    for name in names:
        batches[name].persist()
    try:
        try:  # every rule's findings in one Spark job, before GX asks for them (findings.py)
            pin_findings(spark, {name: (batches[name], _rule_queries(saved[name])) for name in names})
        except Exception:  # noqa: BLE001 - a rule that cannot run: GX runs each on its own and names its error
            pass
        for name in names:
            _check(ctx, source, name, saved[name], batches[name], run_name, results, stored,
                   asset_name(name, where, prepared.partitions))
    finally:
        for name in names:
            batches[name].unpersist()
    if docs:
        _build_docs(ctx, docs, stored)
    return ValidationReport(success=bool(results) and all(r.success for r in results), output_path=output_path,
                            docs_dir=docs, results=results)


def _rule_queries(suite) -> list[str]:
    return [e.unexpected_rows_query for e in suite.expectations
            if isinstance(e, ReplayRuleExpectation) and isinstance(e.unexpected_rows_query, str)]


def _check(ctx, source, name: str, saved_suite, batch, run_name: str | None, results: list, stored: list,
           asset: str) -> None:
    """One suite through its own checkpoint on its batch; its outcomes and stored result keys appended."""
    batch_def = source.add_dataframe_asset(name).add_batch_definition_whole_dataframe(f"{name}_all")
    suite = ctx.suites.add(saved_suite)
    vd = ctx.validation_definitions.add(gx.ValidationDefinition(name=f"{name}_validation", data=batch_def,
                                                                suite=suite))
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(name=f"replay_{name}_checkpoint", validation_definitions=[vd],
                                                   result_format="COMPLETE"))
    run = checkpoint.run(batch_parameters={"dataframe": batch}, run_id=run_identifier(run_name))
    stored += _store_named(ctx, run, asset)
    for vr in run.run_results.values():
        results.extend(_outcomes(name, vr))


def _build_docs(ctx, docs: str, stored: list) -> None:
    """This validation's pages and the index (of every stored result), then the assets served with the site."""
    suites = [ExpectationSuiteIdentifier(name=n) for n in sorted({k.expectation_suite_identifier.name for k in stored})]
    ctx.build_data_docs(site_names=[SITE_NAME], resource_identifiers=[*stored, *suites])
    localize(docs)  # renders offline


def main_validate(config_path: str) -> int:
    """For `replay validate --config FILE`: 0 every expectation holds, 1 one failed (or the outputs are missing),
    2 the config cannot be used."""
    cfg = load_config(config_path)  # a ConfigError goes to the CLI's exit-code mapping (exits.py): exit 2
    try:
        report = validate(cfg.output.path, cfg, run_name="cli")  # Data Docs: run name "cli", not "__none__"
    except OutputsMissing as exc:
        print(f"replay validate: {exc}", file=sys.stderr)
        return 1
    print(report.summary())
    return 0 if report.success else 1
