"""Which partition a partition continues: the latest partition before it, of its length (days continue days, hours
hours), that has a source folder or a saved state (`<output.path>/_state/<id>/`). A partition replayed without a
folder (--allow-missing) left a state and no folder: it is the predecessor too, so that the history is not silently
cut around it; a day with neither (a gap never replayed) is skipped.

The one rule: `replay run` (state_files.continued_state, when no --previous names one), its dry run and the DAG's
planner (orchestration/tasks.plan_partitions, which passes it as --previous) all call `predecessor`. Local folders
are listed without Spark; any other file system through the session (io/fs.py)."""
from __future__ import annotations

from ..io.fs import fs_for
from ..layout import STATE_FOLDER
from ..semantics.config import JobConfig
from .partitions import Partition, source_partitions


def saved_states(spark, cfg: JobConfig, hourly: bool) -> list[str]:
    """The partitions (days, or hours) with a carried state under the output, ascending. A state folder exists only
    whole: it is committed with its partition's outputs (io/commit.py)."""
    root = f"{cfg.output.path.rstrip('/')}/{STATE_FOLDER}"
    return sorted(name for name in fs_for(root, spark).list_dirs(root) if _is_id(name, hourly))


def predecessor(spark, cfg: JobConfig, partition_id: str) -> str | None:
    """The partition whose state `partition_id` continues by default (see the module doc); None: none before it."""
    hourly = Partition.parse(partition_id).hourly
    earlier = [p for p in source_partitions(spark, cfg, hourly) + saved_states(spark, cfg, hourly)
               if p < partition_id]
    return max(earlier) if earlier else None


def _is_id(name: str, hourly: bool) -> bool:
    try:
        return Partition.parse(name).hourly == hourly and name == name.strip()
    except ValueError:  # ConfigError: not a partition's folder (a stray file or folder of the output's)
        return False
