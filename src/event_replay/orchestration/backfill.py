"""The replay task's walk over its plan (the operator, operators.py, only wires it to Airflow and the hook).

The partitions of a run carry state from one to the next, so they run strictly in order and stop at the first
failure: one spark-submit of jobs/replay_job.py per chunk of `partitions_per_job` partitions (`replay run --plan
JSON`: the chunk's range plan as the plan task serialised it, chunks.py). Before its first job it writes the run record (record.py, run.json: version, config,
input fingerprint, Spark), after each job its time and rows; it holds the output's turn from its first job to its
last (turn.py), saying which run it waits for; a retry skips the chunks this run already replayed (done markers in
the run folder) and resubmits the one that failed, which continues after its last committed partition
(range_replay.py). Every planned partition already committed by an identical run (committed.py): nothing is replayed
unless `force`. With the form's dry run it lists what the run would read and write instead (event_replay/dry_run.py)
and is skipped.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from airflow.sdk.exceptions import AirflowSkipException

from ..dry_run import dry_run, dry_run_line, lines
from ..io.commit import no_space
from ..layout import CANCEL_FILE, DONE_FOLDER
from ..semantics.config import parse_config
from .assets import OUTPUT_ASSETS, outlet_extras
from .chunks import DEFAULT_PARTITIONS_PER_JOB, chunk_runs, job_args
from .committed import all_committed, chunk_committed, committed_lines
from .failures import DRY_RUN_KEY, fail
from .plan import PlanError, PlannedRuns, check_state
from .record import new_record, write_record
from .report import clear_chunk_record, partition_rows_read, write_chunk_record
from .turn import output_turn, wait_for_job_lock


@dataclass
class Backfill:
    """One try of a run's replay task: `p` is the plan task's result; `submit(args, input_bytes)` runs one Spark job
    (the hook; `input_bytes`: about what it reads, chunks.job_bytes),
    `spark()` names its master and deploy mode for the record, `on_job` is told the chunk on (for a cancel)."""
    p: dict[str, Any]
    log: Any
    submit: Callable[[list[str], int | None], None]
    spark: Callable[[], dict[str, Any]]
    on_job: Callable[[Any], None]
    ti: Any = None
    run_id: str | None = None
    dag_id: str | None = None
    force: bool = False

    @property
    def plan(self) -> PlannedRuns:
        return PlannedRuns.from_dict(self.p["plan"])

    def run(self) -> dict[Any, dict]:
        """The run (or its dry run: AirflowSkipException); the extra of each output's asset event, none when
        nothing was replayed."""
        p, plan = self.p, self.plan
        if p.get("dry_run"):
            return self._dry_run(p, plan)
        if not plan.runs:
            raise AirflowSkipException("no partition to replay")
        try:
            return self._run(p, plan, Path(p["run_dir"]))
        except OSError as exc:
            if not no_space(exc):
                raise
            # The task's own writes (run record, turn, markers): one line as a Spark job's full disk is; a retry
            # continues after the last committed partition once there is room.
            raise fail(f"no space left on the device of the run folder {p['run_dir']}: {exc.strerror or exc}; "
                       "the committed partitions stay, a retry continues after them once there is room",
                       self.ti) from None

    def _run(self, p: dict[str, Any], plan: PlannedRuns, run_dir: Path) -> dict[Any, dict]:
        record = new_record(p, self.dag_id, self.run_id)
        write_record(run_dir, record)
        (run_dir / CANCEL_FILE).unlink(missing_ok=True)  # a retry after a cancel: not cancelled (yet)
        with output_turn(run_dir.parent, p["output_path"], self.run_id, self.dag_id,
                         on_wait=lambda note: self._waiting(run_dir, record, note)) as waits:
            record["waiting"] = None
            if waits:
                record["waited"] = waits
                self.log.info("the output's turn is this run's after waiting %s", ", ".join(
                    f"{w['seconds']:.0f} s for run {w['for']}" for w in waits))
            write_record(run_dir, record)
            if self._already_committed(plan, run_dir, record):
                return {}
            self._replay_chunks(p, plan, run_dir, record)
        self.log.info("asset events: %s, partitions %s..%s (%d) of %s", ", ".join(a.name for a in OUTPUT_ASSETS),
                      plan.partitions[0], plan.partitions[-1], len(plan.runs), p["output_path"])
        return outlet_extras(p)

    def _waiting(self, run_dir: Path, record: dict, note: dict) -> None:
        """Another run holds the output's turn, or a live driver the job's lock (turn.py): say which, in the log and
        the run record (the runs page)."""
        if note["for"] is None:
            self.log.info("waiting for %s: it holds the job's lock %s (a Spark driver still running: an earlier try's "
                          "whose task was killed, or a replay run from the CLI); the job would be refused until it "
                          "ends", note["holder"], note["lock_file"])
        else:
            self.log.info("waiting for run %s (DAG %s): it holds the output %s (%s); this run goes on when that "
                          "run's replay task ends (if that run is dead on another host, delete %s)", note["for"],
                          note["dag_id"], note["output"], note["holder"], note["lock_file"])
        record["waiting"] = note
        write_record(run_dir, record)

    def _already_committed(self, plan: PlannedRuns, run_dir: Path, record: dict) -> bool:
        """Every planned partition committed by an identical run (committed.py): said, recorded, nothing replayed
        and no asset event (the outputs did not change). The form's `force` replays anyway."""
        by_run = all_committed(run_dir.parent, record, plan)
        if not by_run:
            return False
        for line in committed_lines(by_run):
            self.log.info("%s", line)
        if self.force:
            self.log.info("force: replaying them again")
            return False
        record["skipped"] = {"committed_by": by_run}
        write_record(run_dir, record)
        self.log.info("nothing replayed: all %d partitions are already committed as this run would commit them "
                      "(the form's force replays them anyway)", len(plan.runs))
        return True

    def _replay_chunks(self, p: dict, plan: PlannedRuns, run_dir: Path, record: dict) -> None:
        """One spark-submit per chunk, in order; the chunks a try before this one replayed are skipped."""
        done_dir = run_dir / DONE_FOLDER
        chunks = chunk_runs(plan.runs, p.get("partitions_per_job") or DEFAULT_PARTITIONS_PER_JOB)
        n, i, rows = len(plan.runs), 0, 0
        t_run = time.monotonic()
        # A chunk an identical run committed is skipped only while every chunk before it was too: a chunk after one
        # this run replays continues that one's carried state, which may differ from what the other run continued.
        prefix = True
        for k, chunk in enumerate(chunks, 1):
            i += len(chunk)
            partitions = [run.partition.id for run in chunk]
            span = f"{partitions[0]}..{partitions[-1]}"
            if all((done_dir / partition).exists() for partition in partitions):
                self.log.info("job %d of %d (%s) already replayed by this run (retry): skipped", k, len(chunks), span)
                prefix = False
                continue
            try:
                check_state(p["output_path"], chunk[0])
            except PlanError as exc:
                raise fail(str(exc), self.ti) from None
            self.log.info("job %d of %d: partitions %d..%d of %d, %s (%s%s)", k, len(chunks), i - len(chunk) + 1, i,
                          n, span, chunk[-1].end_of_input,
                          ", first" if chunk[0].first else f", after {chunk[0].previous}")
            if wait_for_job_lock(p["output_path"], lambda note: self._waiting(run_dir, record, note)):
                record["waiting"] = None
                write_record(run_dir, record)
            if prefix and self._chunk_committed(run_dir, record, partitions, f"job {k} of {len(chunks)}"):
                continue
            prefix = False
            write_chunk_record(run_dir, k, len(chunks), partitions)  # the runs page
            self.on_job((str(run_dir), k, len(chunks), partitions))
            t0 = time.monotonic()
            # The planner's serialised plan of this job, passed on as it is. The job logs each partition: i of n, ...
            self.submit(job_args(p["config_path"], p["jobs"][k - 1]), (p.get("job_bytes") or [None] * k)[k - 1])
            seconds = time.monotonic() - t0
            self.on_job(None)
            done_dir.mkdir(parents=True, exist_ok=True)
            for partition in partitions:
                (done_dir / partition).touch()
            job_rows = sum(partition_rows_read(p["output_path"], partition) for partition in partitions)
            rows += job_rows
            record["spark"].update(self.spark())
            record["jobs"].append({"job": k, "partitions": partitions, "seconds": round(seconds, 1),
                                   "rows_read": job_rows})
            write_record(run_dir, record)
            # The job logged each partition once (rows, firings, late rows, its commit's seconds) and its span once.
            self.log.info("job %d of %d: %s, %d partitions, rows read %d, %.1f s for the whole spark-submit", k,
                          len(chunks), span, len(chunk), job_rows, seconds)
        clear_chunk_record(run_dir)
        self.log.info("replayed %d partitions %s..%s in %d job%s, rows read %d, %.1f s", n, plan.partitions[0],
                      plan.partitions[-1], len(chunks), "s" if len(chunks) != 1 else "", rows,
                      time.monotonic() - t_run)

    def _chunk_committed(self, run_dir: Path, record: dict, partitions: list[str], job: str) -> bool:
        """Every partition of the chunk committed by an identical run (committed.py; an identical run killed after
        it, whose turn this run took): said, recorded beside the runs that committed them, not replayed; the next
        chunk continues their carried state. The form's `force` replays it."""
        by_run = {} if self.force else chunk_committed(run_dir.parent, record, partitions)
        if not by_run:
            return False
        committed = (record.get("skipped") or {}).get("committed_by") or {}
        for run_id, ps in by_run.items():
            committed[run_id] = sorted({*committed.get(run_id, []), *ps})
            self.log.info("%s: %s: skipped", job, committed_lines({run_id: ps})[0])
        record["skipped"] = {"committed_by": committed}
        write_record(run_dir, record)
        return True

    def _dry_run(self, p: dict, plan: PlannedRuns) -> dict[Any, dict]:
        cfg = parse_config(p["config_raw"])
        first = plan.runs[0] if plan.runs else None
        d = dry_run(cfg, plan.partitions, p.get("partitions_per_job") or DEFAULT_PARTITIONS_PER_JOB,
                    continues=None if first is None or first.first else first.previous,
                    resume_after=p.get("resume_after"))
        for line in lines(d):
            self.log.info("%s", line)
        committed = committed_lines(all_committed(Path(p["run_dir"]).parent, new_record(p, None, None), plan))
        for line in committed:
            self.log.info("%s", line + ("; force replays them" if self.force
                                        else ": the run would replay nothing (force replays them)"))
        if p.get("refusal"):
            self.log.warning("the run would be refused: %s", p["refusal"])
        summary = dry_run_line(d) + (f"; would be refused: {p['refusal']}" if p.get("refusal") else "") \
            + "".join(f"; {line}" for line in committed)
        self.ti.xcom_push(key=DRY_RUN_KEY, value={"summary": summary, "dry_run": d.to_dict()})
        raise AirflowSkipException(f"{summary}; nothing was replayed or written")
