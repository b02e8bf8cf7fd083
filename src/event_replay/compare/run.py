"""One comparison, end to end: read both sides, match, classify, explain, diagnose, write `compare/`.

`compare(spark, cfg, live_spec, options)` is what `replay compare`, the DAG's compare task and the tests call; it
returns the summary (also written as compare/summary.json): the hints lead with the settings that differ
(diagnosis.py), confirmed by replays one setting at a time with `rank_settings` (settings_search.py).
Calibration (`replay tune --against-live`) uses the same matching without explanations (calibrate.py).
Its own Spark jobs are a fixed few, whatever the number of windows to explain or partitions (8 on the demo, was 44
then 15, then 9): each query planned as one job (spark_jobs.one_job_plans); the live output's checks in one job; the
counts per partition in one job, which also computes the classified windows and late rows (checkpointed as they are
first computed, not by a job each) and, in the same pass, the cause tests' re-fired sums; every small figure (hints,
cause evidence, samples, row counts) gathered in one job (`_figures`); then the writes. The settings search's
replays are tuning's, planned as a replay is.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import engine
from ..layout import COMPARE_FOLDER
from ..quality.prepare import read_outputs
from ..semantics.config import JobConfig, settings_in_words
from .checkpoint import freed, on_disk
from .classify import classify_late, classify_windows, partition_count_frames, partition_rows, totals
from .diagnosis import diagnose, with_causes
from .diagnosis_evidence import evidence_frames, evidence_from, refired_sums
from .explain import explain, source_needing_bounds
from .settings_search import Ranker, scoped_config, search, with_search
from .live import read_live
from .live_spec import LiveSpec
from .matching import PLAN_SETTINGS, match_late, match_windows
from .output import sample_frames, write_compare
from .replay_side import Scope, read_replay
from .rules import DEFAULT_TOLERANCE, rules_for
from .summary import diagnosis, differs
from ..spark_jobs import gather, one_job_plans, session_conf

DEFAULT_MIN_AGREEMENT = 100.0


@dataclass(frozen=True)
class CompareOptions:
    scope: Scope = field(default_factory=Scope)
    summation_order: str = "unknown"
    float_tolerance: float = DEFAULT_TOLERANCE
    min_agreement_pct: float = DEFAULT_MIN_AGREEMENT
    out_dir: str | None = None  # default <output.path>/compare
    use_source: bool = True  # per-split rows of the windows the live output lacks (one scan of the source)
    rank_settings: Ranker | None = None  # confirm the diagnosis by replays, one setting at a time (settings_search.py)
    known_settings: tuple[dict[str, Any], ...] = ()  # variants already replayed and ranked (a calibration grid's rows)


def default_out_dir(cfg: JobConfig) -> str:
    return str(Path(cfg.output.path.rstrip("/"), COMPARE_FOLDER))


def compare(spark: SparkSession, cfg: JobConfig, spec: LiveSpec, options: CompareOptions | None = None
            ) -> dict[str, Any]:
    with freed():  # the comparison's checkpoints (checkpoint.py) go when it ends: later steps share the session
        return _compare(spark, cfg, spec, options or CompareOptions())


def _compare(spark: SparkSession, cfg: JobConfig, spec: LiveSpec, options: CompareOptions) -> dict[str, Any]:
    engine.fixed_plans(spark)  # the replay's plans: no re-planning at run time, a Spark job per stage (BENCHMARKS.md)
    t0 = time.monotonic()
    phases: dict[str, float] = {}
    mark = [t0]

    def phase(name: str) -> None:
        now = time.monotonic()
        phases[name] = round(now - mark[0], 3)
        mark[0] = now

    # the comparison's queries: a Spark job each, no broadcast or adaptive stage jobs; the match sorting once a side
    with one_job_plans(spark), session_conf(spark, PLAN_SETTINGS):
        replay = read_replay(spark, cfg, options.scope)
        live = read_live(spark, spec, cfg, replay.types)
        phase("read and check")
        rules = rules_for(cfg.aggregations, replay.types, live.aggregates, options.summation_order,
                          options.float_tolerance)
        matched = match_windows(replay.firings, live.firings, rules, live.has, spec.keeps_updates)
        # Checkpointed when first computed: by the job that gathers the counts below, which every later query reads
        windows = on_disk(classify_windows(matched, live.aggregates, options.scope, spec.keeps_updates))
        late = None
        if live.late is not None:
            late = on_disk(classify_late(match_late(replay.late, live.late, live.late_identity), options.scope))
        per_partition, bounds, refired = _counts(cfg, windows, late, live.aggregates, options)
        phase("match and classify")
        for r in per_partition:
            r["min_agreement_pct"] = options.min_agreement_pct
        tot = totals(per_partition)
        explained = explain(spark, cfg, windows, replay.late, replay.watermarks, late, live.aggregates, live.has,
                            use_source=options.use_source,
                            to_explain=tot["differing"] + tot["duplicate"] + tot["other_watermark"], defer_hints=True,
                            source_bounds=bounds)
        phase("explain")
        explained, causes, samples, row_counts = _figures(spark, cfg, windows, explained, live, replay.watermarks,
                                                          late, options, refired)
        hints = with_causes(causes, explained.hints)
        phase("diagnose")
    found = None
    if options.rank_settings and differs({"totals": tot}):  # nothing to confirm when everything agrees
        found = search(scoped_config(cfg, options.scope), causes, options.rank_settings, options.known_settings,
                       tot["agreement_pct"])
    hints = with_search(hints, found)
    phase("settings search")
    seconds = time.monotonic() - t0
    summary = {
        "output_path": cfg.output.path, "live": _live_info(spec, live), "scope": options.scope.label,
        "mode": "every firing (the live sink keeps updates)" if spec.keeps_updates else "last firing per window",
        "rules": [{"aggregate": r.aggregate, "expression": r.expression, "exact": r.exact, "why": r.why,
                   "tolerance": r.tolerance, "text": r.describe()} for r in rules],
        "not_compared": [a for a in cfg.aggregations if a not in live.aggregates],
        "summation_order": options.summation_order, "min_agreement_pct": options.min_agreement_pct,
        "totals": tot, "partitions": per_partition, "hints": hints,
        "config": settings_in_words(cfg), "search": _search_rows(found), "seconds": round(seconds, 3),
        "rows": row_counts,
    }
    summary["diagnosis"] = diagnosis(summary)  # what every view of the comparison leads with
    out_dir = options.out_dir or default_out_dir(cfg)
    summary["out_dir"] = out_dir
    summary["phases_s"] = phases
    with one_job_plans(spark):
        summary = write_compare(out_dir, summary, windows, explained.windows, late, live.aggregates, samples)
    phase("write")
    summary["seconds_total"] = round(time.monotonic() - t0, 3)
    return summary


def _counts(cfg: JobConfig, windows, late, aggs, options: CompareOptions):
    """The counts per partition, the span of the windows explain reads the source for and the re-fired windows'
    sums (the cause tests'), in one Spark job (the one that computes the classified windows and late rows): the
    sums in the counts' own pass over the windows. (Rows of partition_counts, the bounds' row or None, the sums.)"""
    sums = refired_sums()
    frames = partition_count_frames(windows, late, extra=list(sums.values()))
    needing = source_needing_bounds(cfg, windows, aggs) if options.use_source else None
    if needing is not None:
        frames["source_bounds"] = needing
    found = gather(frames)
    bounds = found["source_bounds"][0] if needing is not None else None
    refired = {n: sum(int(r.pop(n) or 0) for r in found["windows"]) for n in sums}
    return partition_rows(found, late is not None), bounds, refired


def _figures(spark: SparkSession, cfg: JobConfig, windows, explained, live, watermarks, late,
             options: CompareOptions, refired: dict[str, int]):
    """Every small figure of the comparison in one Spark job (spark_jobs.gather): the hints' (explained with
    deferred hints), the cause tests' evidence, summary.json's samples and the replay's row counts. Returns the
    explained windows with their hints, the settings that differ (diagnosis.py, the most certain first), the
    samples' rows and the row accounting."""
    ev = explained.windows if "held_by" in explained.windows.columns else None  # None: nothing to explain
    evidence = evidence_frames(spark, cfg, windows, ev, watermarks, late, live.has, refired,
                               use_source=options.use_source)
    rows_frame, row_figures = _row_accounting(spark, cfg)
    parts = {"hint": explained.hint_frames, "evidence": evidence.frames,
             "sample": sample_frames(windows, explained.windows, late, live.aggregates), "rows": {"sums": rows_frame}}
    found = gather({f"{part}/{name}": frame for part, frames in parts.items() for name, frame in frames.items()})
    of = {part: {name.split("/", 1)[1]: rows for name, rows in found.items() if name.startswith(part + "/")}
          for part in parts}
    explained = explained.with_hints(of["hint"], cfg, live.aggregates)
    causes = diagnose(evidence_from(of["evidence"], evidence, explained.hints), cfg)
    return explained, causes, of["sample"], row_figures(of["rows"]["sums"])


def _search_rows(found: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    keep = ("change", "setting", "value_ms", "values_ms", "live_rank", "live_score", "live_agreement_pct", "live_windows_equal",
            "live_windows", "live_late_matched", "live_late_union")
    return None if found is None else [{k: r.get(k) for k in keep} for r in found["rows"]]


def _live_info(spec: LiveSpec, live) -> dict[str, Any]:
    return {"path": spec.path, "format": spec.format, "columns": dict(spec.columns), "options": dict(spec.options),
            "late_path": spec.late_path, "late_identity": live.late_identity, "has": sorted(live.has),
            "rows": live.rows, "late_rows": live.late_rows if spec.late_path else None,
            "keeps_updates": spec.keeps_updates, "aggregates": list(live.aggregates)}


_ROW_COUNTS = ("rows_read", "rows_in_windows", "late_rows", "quarantined_rows", "skipped_rows", "filtered_rows")


def _row_accounting(spark: SparkSession, cfg: JobConfig):
    """The replay's rows, as its counts/ dataset has them: read = in windows + late + quarantined + skipped +
    filtered (a counts/ written before filters existed has no filtered_rows: 0). (The sums' frame, the figures
    from its row.)"""
    counts = read_outputs(spark, cfg.output.path)["counts"]
    names = [c for c in _ROW_COUNTS if c in counts.columns]
    sums = counts.agg(*[F.sum(c).alias(c) for c in names]) if names else spark.range(1).select(F.lit(0).alias("none"))

    def figures(rows: list[dict[str, Any]]) -> dict[str, int]:
        r = rows[0] if rows else {}
        return {c: int(r.get(c) or 0) for c in _ROW_COUNTS}

    return sums, figures



__all__ = ["compare", "CompareOptions", "default_out_dir"]
