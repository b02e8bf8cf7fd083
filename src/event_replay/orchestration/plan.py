"""Which `dt=` partitions a run replays, in which order, and what carried state each one needs.

Partition replay carries state (docs/semantics.md, "Partitions and carried state"): partition P continues from the
state the previous partition left under `<output.path>/_state/<previous>/`, unless it starts a history (`--first`). So the plan is
strictly ordered, every partition but the last holds, and a partition whose predecessor's state is missing
must not run (it would silently start from scratch and differ from a replay of the whole range).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..io.fs import LocalFs
from ..io.partition_folders import partitions_present
from ..layout import state_dir


class PlanError(ValueError):
    """The partitions cannot be replayed as requested (missing partitions, missing carried state, ...)."""


def list_partitions(source_path: str | Path) -> list[dt.date]:
    """The days that have a `dt=YYYY-MM-DD` folder under the source (local filesystem), ascending."""
    if not Path(source_path).is_dir():
        raise PlanError(f"source.path {source_path} is not a directory of dt=YYYY-MM-DD partitions")
    return [dt.date.fromisoformat(d) for d in partitions_present(LocalFs(), str(source_path), hourly=False)]


def days_between(start: dt.date, end: dt.date) -> list[dt.date]:
    return [start + dt.timedelta(days=i) for i in range((end - start).days + 1)]


def state_path(output_path: str | Path, partition: str) -> Path:
    return Path(state_dir(str(output_path), partition))


def state_exists(output_path: str | Path, partition: str) -> bool:
    """A partition's carried state is there (a non-empty folder: the job writes it all or nothing)."""
    p = state_path(output_path, partition)
    return p.is_dir() and any(p.iterdir())


@dataclass(frozen=True)
class PartitionRun:
    partition: str  # YYYY-MM-DD
    first: bool  # starts a history: no carried state
    end_of_input: str  # hold, or the request's choice for the last partition
    previous: str | None  # the partition whose state this one continues from
    missing: bool = False  # no folder in the source: replayed as empty (allow_missing_partitions)

    def job_args(self, config_path: str) -> list[str]:
        """Arguments of jobs/replay_job.py (and `replay run`) for this partition. The predecessor is named: the
        job's default (the latest source folder before it) would skip a missing day replayed as empty."""
        args = ["--config", config_path, "--partition", self.partition, "--end-of-input", self.end_of_input]
        args += ["--first"] if self.first else ["--previous", self.previous]
        return args + (["--allow-missing"] if self.missing else [])


@dataclass(frozen=True)
class Plan:
    runs: tuple[PartitionRun, ...]
    missing: tuple[str, ...]  # days of the range without a partition (replayed as empty: allow_missing_partitions)

    @property
    def partitions(self) -> list[str]:
        return [r.partition for r in self.runs]

    def to_dict(self) -> dict:
        return {"runs": [asdict(r) for r in self.runs], "missing": list(self.missing)}

    @staticmethod
    def from_dict(d: dict) -> "Plan":
        return Plan(runs=tuple(PartitionRun(**r) for r in d["runs"]), missing=tuple(d.get("missing", ())))


def plan_range(available: Iterable[dt.date], start: dt.date, end: dt.date, *, end_of_input: str,
               allow_missing: bool = False, continue_from: str | None = None) -> Plan:
    """The ordered replay of the days [start, end].

    `continue_from`: the partition whose state the first one continues (None: the first starts a history).
    Missing days fail unless `allow_missing`; then they are replayed as empty partitions, so that the replay clock
    still runs through them (ticks, idleness) exactly as in one replay of the whole range."""
    if end < start:
        raise PlanError(f"end date {end} is before start date {start}")
    have = set(available)
    wanted = days_between(start, end)
    missing = [d.isoformat() for d in wanted if d not in have]
    if missing and not allow_missing:
        raise PlanError(f"missing partitions in {start}..{end}: {', '.join('dt=' + m for m in missing)} "
                        "(set allow_missing_partitions to replay them as empty)")
    runs = []
    previous = continue_from
    for i, day in enumerate(wanted):
        p = day.isoformat()
        last = i == len(wanted) - 1
        runs.append(PartitionRun(partition=p, first=previous is None, previous=previous,
                                 end_of_input=end_of_input if last else "hold", missing=p in missing))
        previous = p
    return Plan(runs=tuple(runs), missing=tuple(missing))


def predecessor(available: Sequence[dt.date], day: dt.date) -> str | None:
    """The latest partition before `day`, whose state a replay of `day` continues (None: `day` is the first)."""
    before = [d for d in available if d < day]
    return max(before).isoformat() if before else None


def check_state(output_path: str | Path, run: PartitionRun) -> None:
    """Refuse to replay a partition whose predecessor left no state: its result would not be a continuation."""
    if run.first or run.previous is None:
        return
    if not state_exists(output_path, run.previous):
        raise PlanError(f"partition {run.partition} continues from {run.previous}, but there is no carried state "
                        f"under {state_path(output_path, run.previous)}: replay {run.previous} first "
                        "(or start a new history with --first)")
