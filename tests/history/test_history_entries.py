"""One partition history, three entries: the DAG (its validate and plan tasks, then the jobs its replay task submits,
one per chunk), `replay run --dry-run` and `replay run` name the same predecessor and the same resume point for the
same history, and the DAG's outputs equal the CLI's firing for firing (every dataset, every carried state).

Histories: a day replayed as empty (--allow-missing: a state, no folder), a gap (a day never replayed, no folder),
an hour replayed as empty (hourly partitions), and a range interrupted after its first commit in a continued history.
Each is built once, then copied: the DAG replays the next step on one copy, the CLI on the other. A one-day step is
also planned by the nightly DAG's validate task. In process, on the tests' one Spark session (the CLI's own session
start and stop are bypassed); no Airflow scheduler: the functions the DAG's tasks call."""
from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from event_replay.cli import main as replay
from event_replay.layout import DATASETS, STATE_FOLDER
from event_replay.orchestration.chunks import job_args
from event_replay.orchestration.plan import PlannedRuns
from event_replay.orchestration.tasks import plan_partitions, validate_backfill, validate_nightly
from partition_cases import hourly_log

pytestmark = [pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]
CONTINUES = re.compile(r"^replay: (\S+) (?:continues the carried state of (\S+)|(starts a new history))", re.M)
RESUMES = [re.compile(r"committed up to (\S+): a run continues after it"), re.compile(r"resuming \S+ after (\S+) ")]


def _job_entry():
    """jobs/replay_job.py's main: what the DAG's spark-submit runs."""
    spec = importlib.util.spec_from_file_location("replay_job", ROOT / "jobs" / "replay_job.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


@dataclass(frozen=True)
class Case:
    """A history (`setup`: `replay run` argument lists run first, on the CLI's output, then copied to the DAG's),
    and the next step: the range both replay, whether it continues the history, and what both must name."""

    layout: str  # days | hours
    missing: tuple[str, ...]  # days (or hours) without a source folder
    setup: tuple[tuple[str, ...], ...]
    first: str
    last: str
    continues: bool
    predecessor: str | None
    resume: str | None = None
    interrupt: tuple[str, ...] = ()  # a `replay run` that dies after its first commit, before the step


CASES = {
    "a day replayed as empty": Case(
        "days", ("2024-01-02",), (("--partition", "2024-01-01", "--first"),
                                 ("--partition", "2024-01-02", "--allow-missing")),
        "2024-01-03", "2024-01-03", True, "2024-01-02"),
    "a gap": Case(
        "days", ("2024-01-03",), (("--partitions", "2024-01-01..2024-01-02", "--first"),),
        "2024-01-04", "2024-01-04", True, "2024-01-02"),
    "an hour replayed as empty": Case(
        "hours", ("2024-01-01T01",), (("--partition", "2024-01-01T00", "--first"),
                                      ("--partition", "2024-01-01T01", "--allow-missing")),
        "2024-01-01T02", "2024-01-01T02", True, "2024-01-01T01"),
    "an interrupted range": Case(
        "days", (), (("--partition", "2024-01-01", "--first"),), "2024-01-02", "2024-01-04", True, "2024-01-01",
        resume="2024-01-02", interrupt=("--partitions", "2024-01-02..2024-01-04", "--end-of-input", "flush")),
}


def _days(log: Path, missing: tuple[str, ...]) -> None:
    """Four days, 28 rows each in their last minutes: p1 stops at 23:58, p0 at 23:59:50, so the next day holds the
    idle transitions (p1 idle at 00:03 lets the stream on to p0's watermark: firings), which a replay skipping that
    day would emit again; one row a day 40 s late."""
    for day in range(1, 5):
        end = dt.datetime(2024, 1, day + 1, tzinfo=dt.timezone.utc)
        rows = sorted([(end - dt.timedelta(seconds=s), "p0") for s in range(180, 0, -10)]
                      + [(end - dt.timedelta(seconds=s), "p1") for s in range(300, 110, -20)])
        offsets = {"p0": [], "p1": []}
        for _, split in rows:
            offsets[split].append(100 * day + len(offsets[split]))
        ts = pa.timestamp("ms", tz="UTC")
        table = pa.table({
            "split": [s for _, s in rows], "offset": [offsets[s].pop(0) for _, s in rows],
            "arrival_time": pa.array([a for a, _ in rows], ts),
            "event_time": pa.array([a - dt.timedelta(seconds=40 if i == 7 else 0.3) for i, (a, _) in enumerate(rows)],
                                   ts),
            "key": ["a" if i % 3 else "b" for i in range(len(rows))], "value": list(range(len(rows)))})
        partition = (end - dt.timedelta(days=1)).date().isoformat()
        if partition not in missing:
            (log / f"dt={partition}").mkdir(parents=True)
            pq.write_table(table, log / f"dt={partition}" / "part-00000.parquet")


def _project(tmp_path: Path, case: Case) -> tuple[Path, Path]:
    """The source (few rows) and two configs alike but for their output: (cli.yaml, dag.yaml)."""
    log = tmp_path / "log"
    if case.layout == "hours":
        hourly_log(log)
        for hour in case.missing:
            shutil.rmtree(log / f"dt={hour[:10]}" / f"hour={hour[11:]}")
    else:
        _days(log, case.missing)
    raw = yaml.safe_load((ROOT / "jobs" / "configs" / "demo_partitioned.yaml").read_text())
    raw["source"].update(path=str(log), splits=["p0", "p1"])
    raw["watermark"]["idle_timeout"] = "5m"
    configs = []
    for name in ("cli", "dag"):
        raw["output"]["path"] = str(tmp_path / f"out_{name}")
        configs.append(tmp_path / f"{name}.yaml")
        configs[-1].write_text(yaml.safe_dump(raw))
    return configs[0], configs[1]


@pytest.fixture
def run_here(spark, monkeypatch, capsys):
    """`replay run ARGS` (or the job entry) in this process on the tests' session: (exit code, stdout + stderr)."""
    monkeypatch.setattr("event_replay.commands.run.build_session", lambda **_: spark)
    monkeypatch.setattr(spark, "stop", lambda: None)

    def run(entry, args) -> tuple[int, str]:
        capsys.readouterr()
        code = entry(list(args))
        said = capsys.readouterr()
        return code, said.out + said.err
    return run


def _interrupt(run_here, monkeypatch, config: Path, args: tuple[str, ...]) -> None:
    """A range run that dies after its first partition's commit (as a lost node would: no last words)."""
    import event_replay.pipeline as pipeline  # where a range's partitions are committed one by one

    real, made = pipeline.commit, []

    def commit_once(*a, **kw):
        if made:
            raise KeyboardInterrupt  # stops the run as a kill does: nothing after it runs
        made.append(a)
        return real(*a, **kw)

    monkeypatch.setattr(pipeline, "commit", commit_once)
    code, said = run_here(replay, ["run", "--config", str(config), *args])
    monkeypatch.setattr(pipeline, "commit", real)
    assert code != 0 and len(made) == 1, said


def _named(text: str) -> tuple[str | None, str | None]:
    """(the predecessor, the resume point) a dry run or a run printed."""
    m = CONTINUES.search(text)
    assert m is not None, text
    resume = next((r.group(1) for r in (p.search(text) for p in RESUMES) if r), None)
    return m.group(2), resume


def _dag_plan(case: Case, config: Path, tmp_path: Path) -> dict:
    """The DAG's validate and plan tasks for the step (the form's request; hours passed as the planner takes them)."""
    request = {"config": str(config), "start_date": case.first[:10], "end_date": case.last[:10],
               "end_of_input": "flush", "allow_missing_partitions": bool(case.missing),
               "continue_from_state": case.continues, "run_data_quality": False}
    v = validate_backfill(request, str(tmp_path), "manual__history")
    return plan_partitions({**v, "start": case.first, "end": case.last})


def _nightly_named(case: Case, config: Path, tmp_path: Path) -> str | None:
    """The predecessor the nightly DAG's validate and plan tasks name for a one-day step (None: a new history)."""
    params = {"config": str(config), "end_of_input": "flush", "allow_missing_partitions": bool(case.missing),
              "run_data_quality": False}
    v = validate_nightly(params, dt.date.fromisoformat(case.first), str(tmp_path), "scheduled__history")
    run = PlannedRuns.from_dict(plan_partitions(v)["plan"]).runs[0]
    return None if run.first else run.previous


def _outputs(spark, out: Path) -> dict:
    """Every dataset's rows (all partitions, sorted) and every carried state's manifest."""
    found = {ds: sorted(map(repr, spark.read.parquet(str(out / ds)).collect())) for ds in DATASETS
             if (out / ds).is_dir()}
    for state in sorted((out / STATE_FOLDER).iterdir()):
        found[state.name] = json.loads((state / "manifest.json").read_text())
    return found


@pytest.mark.parametrize("name", list(CASES))
def test_the_dag_and_the_cli_continue_the_same_history(spark, tmp_path, run_here, monkeypatch, name):
    case = CASES[name]
    cli_config, dag_config = _project(tmp_path, case)
    cli_out, dag_out = tmp_path / "out_cli", tmp_path / "out_dag"
    for args in case.setup:
        code, said = run_here(replay, ["run", "--config", str(cli_config), *args])
        assert code == 0, said
    if case.interrupt:
        _interrupt(run_here, monkeypatch, cli_config, case.interrupt)
    if cli_out.exists():
        shutil.copytree(cli_out, dag_out)

    # What the DAG plans, and the jobs it submits for it.
    planned = _dag_plan(case, dag_config, tmp_path)
    plan = PlannedRuns.from_dict(planned["plan"])
    dag_named = (None if plan.runs[0].first else plan.runs[0].previous, planned.get("resume_after"))
    jobs = [job_args(planned["config_path"], job) for job in planned["jobs"]]  # the replay task's spark-submits
    assert len(jobs) == 1
    cli_args = ["--partitions", f"{case.first}..{case.last}", "--end-of-input", "flush"]
    cli_args += ["--first"] if not case.continues else []
    cli_args += ["--allow-missing"] if case.missing else []

    # `replay run --dry-run` and `replay run` with what a user types (no --previous: the rule's default).
    code, dry = run_here(replay, ["run", "--config", str(cli_config), *cli_args, "--dry-run"])
    assert code == 0, dry
    assert dag_named == (case.predecessor, case.resume), planned
    if case.layout == "days" and case.first == case.last and case.continues:
        assert _nightly_named(case, dag_config, tmp_path) == case.predecessor
    assert _named(dry) == dag_named, dry
    code, ran = run_here(replay, ["run", "--config", str(cli_config), *cli_args])
    assert code == 0, ran
    assert _named(ran) == dag_named, ran
    code, dag_ran = run_here(_job_entry(), jobs[0])
    assert code == 0, dag_ran
    assert _named(dag_ran) == dag_named, dag_ran

    assert _outputs(spark, dag_out) == _outputs(spark, cli_out)
