"""Partitions of a history: a UTC day `YYYY-MM-DD` or hour `YYYY-MM-DDTHH` by arrival time, covering [start, end),
and the replay clock's range (`Clock`) a replay runs over: a whole source's, a partition's or a span's. A partition
is a clock range with the id its state is written under (`<output.path>/_state/<id>/`); its folders are
io/partition_folders.py's. The one enumeration of partitions: a range's ids (`partition_ids`, a missing folder
included), the source's folders (`source_partitions`) and the saved states (`saved_states`, `has_state`), on any file system
io/fs.py reaches (a local one without Spark).

Which partition a partition continues (`predecessor`): the latest partition before it, of its length (days continue
days, hours hours), that has a source folder or a saved state (`<output.path>/_state/<id>/`). A partition replayed
without a folder (--allow-missing) left a state and no folder: it is the predecessor too, so that the history is not
silently cut around it; a day with neither (a gap never replayed) is skipped. The one rule: `replay run`
(state_files.continued_state, when no --previous names one), its dry run and the DAG's planner
(orchestration/tasks.plan_partitions, which passes it as --previous) all call it."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from ..io.fs import fs_for
from ..io.partition_folders import folder_of, partitions_present
from ..layout import STATE_FOLDER, state_dir
from ..io.source import SourceData
from ..semantics.config import JobConfig
from ..semantics.config_keys import ConfigError

MANIFEST = "manifest.json"  # a state's scalars, written last (state_files.py): a folder with one is whole
_ID = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:T(\d{2}))?$")


@dataclass(frozen=True)
class Clock:
    """The replay clock's range [start_ms, end_ms) of a replay that writes no state (a whole source); a partition or
    a span of them is a clock with the `id` its state is written under."""
    start_ms: int
    end_ms: int
    id: str | None = None

    @staticmethod
    def of_source(source: SourceData) -> "Clock":
        """A whole-source replay's range: from the first row to the end of input (0 when no row and no explicit
        range say where it starts)."""
        start = source.start_ms if source.start_ms is not None else 0
        return Clock(start, source.end_ms if source.end_ms is not None else start)


@dataclass(frozen=True)
class Partition:
    """A day or hour partition of the source, by arrival time (UTC)."""

    id: str  # YYYY-MM-DD or YYYY-MM-DDTHH
    start_ms: int
    end_ms: int

    @staticmethod
    def parse(text: str) -> "Partition":
        m = _ID.match(text.strip())
        if not m:
            raise ConfigError("--partition", f"{text!r}: expected YYYY-MM-DD or YYYY-MM-DDTHH")
        try:
            day = dt.datetime.fromisoformat(m.group(1)).replace(tzinfo=dt.timezone.utc)
            if m.group(2) is None:
                start, length = day, dt.timedelta(days=1)
            else:
                start, length = day.replace(hour=int(m.group(2))), dt.timedelta(hours=1)
        except ValueError as exc:
            raise ConfigError("--partition", f"{text!r}: {exc}") from None
        s = int(start.timestamp() * 1000)
        return Partition(text.strip(), s, s + int(length.total_seconds() * 1000))

    @property
    def hourly(self) -> bool:
        return "T" in self.id

    @property
    def subpath(self) -> str:
        """The folder under the source (and under each output dataset) holding this partition."""
        return folder_of(self.id)

    def previous(self) -> "Partition":
        length = self.end_ms - self.start_ms
        start = dt.datetime.fromtimestamp((self.start_ms - length) / 1000, tz=dt.timezone.utc)
        return Partition.parse(start.strftime("%Y-%m-%dT%H" if self.hourly else "%Y-%m-%d"))


def parse_range(text: str) -> tuple[Partition, Partition]:
    """`FROM..TO`, both days or both hours, FROM <= TO (inclusive)."""
    lo, sep, hi = text.strip().partition("..")
    if not sep:
        raise ConfigError("--partitions", f"{text!r}: expected FROM..TO (e.g. 2024-01-01..2024-03-31)")
    first, last = Partition.parse(lo), Partition.parse(hi)
    if first.hourly != last.hourly:
        raise ConfigError("--partitions", f"{text!r}: both ends must be days or both hours")
    if last.start_ms < first.start_ms:
        raise ConfigError("--partitions", f"{text!r}: {last.id} is before {first.id}")
    return first, last


def partition_ids(first: Partition, last: Partition) -> list[str]:
    """Every day (or hour) of [first, last]: a partition without a source folder is missing, not skipped."""
    step = first.end_ms - first.start_ms
    fmt = "%Y-%m-%dT%H" if first.hourly else "%Y-%m-%d"
    return [dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).strftime(fmt)
            for ms in range(first.start_ms, last.start_ms + 1, step)]


def source_partitions(spark, cfg: JobConfig, hourly: bool) -> list[str]:
    """The partition ids with a folder under source.path, ascending. A local source needs no Spark (`spark` None:
    the dry run, the DAG's planner); any other file system is listed through the session's Hadoop FileSystem."""
    return partitions_present(fs_for(cfg.source.path, spark), cfg.source.path, hourly)


def saved_states(spark, cfg: JobConfig, hourly: bool) -> list[str]:
    """The partitions (days, or hours) with a carried state under the output, ascending. A state folder exists only
    whole: it is committed with its partition's outputs (io/commit.py)."""
    root = f"{cfg.output.path.rstrip('/')}/{STATE_FOLDER}"
    return sorted(name for name in fs_for(root, spark).list_dirs(root) if _is_id(name, hourly))


def has_state(spark, output: str, partition: str) -> bool:
    """Whether `partition` left a carried state under `output` (its manifest). A local output needs no Spark."""
    folder = state_dir(output, partition)
    return fs_for(folder, spark).exists(f"{folder}/{MANIFEST}")


def predecessor(spark, cfg: JobConfig, partition_id: str, sources: list[str] | None = None) -> str | None:
    """The partition whose state `partition_id` continues by default (see the module doc: the latest one before it
    with a source folder or a saved state); None: none before it. `sources`: source_partitions' answer, when the
    caller has listed them already (the DAG's planner)."""
    hourly = Partition.parse(partition_id).hourly
    if sources is None:
        sources = source_partitions(spark, cfg, hourly)
    earlier = [p for p in sources + saved_states(spark, cfg, hourly) if p < partition_id]
    return max(earlier) if earlier else None


def _is_id(name: str, hourly: bool) -> bool:
    try:
        return Partition.parse(name).hourly == hourly and name == name.strip()
    except ValueError:  # ConfigError: not a partition's folder (a stray file or folder of the output's)
        return False
