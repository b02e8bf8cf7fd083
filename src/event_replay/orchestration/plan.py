"""Which partitions a DAG run replays, in which order, and what carried state each one needs.

Partition replay carries state (docs/semantics.md, "Partitions and carried state"): partition P continues from the
state the previous partition left under `<output.path>/_state/<previous>/`, unless it starts a history (`--first`).
So the plan is strictly ordered, every partition but the last holds, and a partition whose predecessor's state is
missing must not run (it would silently start from scratch and differ from a replay of the whole range).

Which partitions a range has and which one comes before it are history/'s (partitions.py): the
planner (tasks.plan_partitions) asks it, as `replay run` and its dry run do, so all three continue the same state.
Partitions are ids, days `YYYY-MM-DD` or hours `YYYY-MM-DDTHH`. Each partition's place in the plan is the
pipeline's own plan of it (`pipeline.OnePartition`), so the DAG and `replay run` share one plan type; the jobs
replay them a chunk at a time as one span (chunks.py: `replay run --partitions`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..history.partitions import Partition, parse_range, partition_ids
from ..history.partitions import has_state
from ..io.fs import is_local
from ..io.partition_folders import folder_of
from ..layout import state_dir
from ..pipeline import OnePartition
from ..semantics.config_keys import ConfigError


class PlanError(ValueError):
    """The partitions cannot be replayed as requested (missing partitions, missing carried state, ...)."""


@dataclass(frozen=True)
class PlannedRuns:
    """A backfill's plan: the pipeline's own plan of each partition (`pipeline.OnePartition`: first, previous, end
    of input, allowed to be missing), in order, and the partitions without a folder."""
    runs: tuple[OnePartition, ...]
    missing: tuple[str, ...]  # partitions of the range without a folder (replayed as empty: allow_missing_partitions)

    @property
    def partitions(self) -> list[str]:
        return [r.partition.id for r in self.runs]

    def to_dict(self) -> dict:
        return {"runs": [r.to_dict() for r in self.runs], "missing": list(self.missing)}

    @staticmethod
    def from_dict(d: dict) -> "PlannedRuns":
        return PlannedRuns(runs=tuple(OnePartition.from_dict(r) for r in d["runs"]),
                           missing=tuple(d.get("missing", ())))


def plan_range(available: Iterable[str], first: str, last: str, *, end_of_input: str, allow_missing: bool = False,
               continue_from: str | None = None) -> PlannedRuns:
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
        runs.append(OnePartition(Partition.parse(p), first=previous is None, previous=previous,
                                 end_of_input=end_of_input if last_one else "hold", allow_missing=p in missing))
        previous = p
    return PlannedRuns(runs=tuple(runs), missing=tuple(missing))


def check_state(output_path: str | Path, run: OnePartition) -> None:
    """Refuse to replay a partition whose predecessor left no state: its result would not be a continuation. A
    remote output is not listed without Spark: there the job refuses it (history/state_files.read_state)."""
    if run.first or run.previous is None or not is_local(str(output_path)):
        return
    if not has_state(None, str(output_path), run.previous):
        raise PlanError(f"partition {run.partition.id} continues from {run.previous}, but there is no carried state "
                        f"under {state_dir(str(output_path), run.previous)}: replay {run.previous} first "
                        "(or start a new history with --first)")
