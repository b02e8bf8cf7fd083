"""Which partitions a DAG run replays, in which order, and what carried state each one needs.

Partition replay carries state (docs/semantics.md, "Partitions and carried state"): partition P continues from the
state the previous partition left under `<output.path>/_state/<previous>/`, unless it starts a history (`--first`).
So the plan is strictly ordered, every partition but the last holds, and a partition whose predecessor's state is
missing must not run (it would silently start from scratch and differ from a replay of the whole range).

Which partitions a range has and which one comes before it are history/'s (partitions.py): the
planner (tasks.plan_partitions) asks it, as `replay run` and its dry run do, so all three continue the same state.
Partitions are ids, days `YYYY-MM-DD` or hours `YYYY-MM-DDTHH`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from ..history.partitions import parse_range, partition_ids
from ..history.state_files import has_state
from ..io.fs import is_local
from ..io.partition_folders import folder_of
from ..layout import state_dir
from ..semantics.config_keys import ConfigError


class PlanError(ValueError):
    """The partitions cannot be replayed as requested (missing partitions, missing carried state, ...)."""


@dataclass(frozen=True)
class PartitionRun:
    partition: str  # YYYY-MM-DD or YYYY-MM-DDTHH
    first: bool  # starts a history: no carried state
    end_of_input: str  # hold, or the request's choice for the last partition
    previous: str | None  # the partition whose state this one continues from
    missing: bool = False  # no folder in the source: replayed as empty (allow_missing_partitions)


@dataclass(frozen=True)
class Plan:
    runs: tuple[PartitionRun, ...]
    missing: tuple[str, ...]  # partitions of the range without a folder (replayed as empty: allow_missing_partitions)

    @property
    def partitions(self) -> list[str]:
        return [r.partition for r in self.runs]

    def to_dict(self) -> dict:
        return {"runs": [asdict(r) for r in self.runs], "missing": list(self.missing)}

    @staticmethod
    def from_dict(d: dict) -> "Plan":
        return Plan(runs=tuple(PartitionRun(**r) for r in d["runs"]), missing=tuple(d.get("missing", ())))


def plan_range(available: Iterable[str], first: str, last: str, *, end_of_input: str, allow_missing: bool = False,
               continue_from: str | None = None) -> Plan:
    """The ordered replay of the partitions [first, last] (`available`: those with a source folder).

    `continue_from`: the partition whose state the first one continues (None: the first starts a history).
    Missing partitions fail unless `allow_missing`; then they are replayed as empty partitions, so that the replay
    clock still runs through them (ticks, idleness) exactly as in one replay of the whole range."""
    try:
        wanted = partition_ids(*parse_range(f"{first}..{last}"))
    except ConfigError as exc:
        raise PlanError(exc.why) from None
    have = set(available)
    missing = [p for p in wanted if p not in have]
    if missing and not allow_missing:
        raise PlanError(f"missing partitions in {first}..{last}: {', '.join(folder_of(m) for m in missing)} "
                        "(set allow_missing_partitions to replay them as empty)")
    runs = []
    previous = continue_from
    for i, p in enumerate(wanted):
        last_one = i == len(wanted) - 1
        runs.append(PartitionRun(partition=p, first=previous is None, previous=previous,
                                 end_of_input=end_of_input if last_one else "hold", missing=p in missing))
        previous = p
    return Plan(runs=tuple(runs), missing=tuple(missing))


def check_state(output_path: str | Path, run: PartitionRun) -> None:
    """Refuse to replay a partition whose predecessor left no state: its result would not be a continuation. A
    remote output is not listed without Spark: there the job refuses it (history/state_files.read_state)."""
    if run.first or run.previous is None or not is_local(str(output_path)):
        return
    if not has_state(None, str(output_path), run.previous):
        raise PlanError(f"partition {run.partition} continues from {run.previous}, but there is no carried state "
                        f"under {state_dir(str(output_path), run.previous)}: replay {run.previous} first "
                        "(or start a new history with --first)")
