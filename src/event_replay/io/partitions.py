"""Partitions of a history: a UTC day `YYYY-MM-DD` (folder `dt=YYYY-MM-DD`) or hour `YYYY-MM-DDTHH`
(`dt=YYYY-MM-DD/hour=HH`) by arrival time, covering [start, end). The same folders hold a partition's rows in the
source and its outputs in each output dataset; its carried state is `<output.path>/_state/<id>/`. A partition is
a range of the replay clock with an id (`Clock`, which a whole-source replay uses without one).

This module is the one listing of partition folders (on any file system io/fs.py reaches) and the one place
that knows the folder names."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from ..semantics.config import ConfigError
from .fs import Fs

_ID = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:T(\d{2}))?$")
_DAY_FOLDER = re.compile(r"^dt=(\d{4}-\d{2}-\d{2})$")
_HOUR_FOLDER = re.compile(r"^hour=(\d{2})$")


@dataclass(frozen=True)
class Clock:
    """The replay clock's range [start_ms, end_ms) of a replay that writes no state (a whole source); a partition or
    a span of them is a clock with the `id` its state is written under."""
    start_ms: int
    end_ms: int
    id: str | None = None


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
        day = self.id[:10]
        return f"dt={day}/hour={self.id[11:13]}" if self.hourly else f"dt={day}"

    def previous(self) -> "Partition":
        length = self.end_ms - self.start_ms
        start = dt.datetime.fromtimestamp((self.start_ms - length) / 1000, tz=dt.timezone.utc)
        return Partition.parse(start.strftime("%Y-%m-%dT%H" if self.hourly else "%Y-%m-%d"))


def partitions_present(fs: Fs, root: str, hourly: bool) -> list[str]:
    """The partition ids with a folder under `root`, ascending: days (`dt=D`), or hours (`dt=D/hour=HH`).
    A folder that names no real day or hour (dt=2024-02-30, hour=24) is not a partition."""
    root = root.rstrip("/")
    out = []
    for name in fs.list_dirs(root):
        m = _DAY_FOLDER.match(name)
        if not (m and _is_day(m.group(1))):
            continue
        if not hourly:
            out.append(m.group(1))
            continue
        for hour in fs.list_dirs(f"{root}/{name}"):
            h = _HOUR_FOLDER.match(hour)
            if h and int(h.group(1)) < 24:
                out.append(f"{m.group(1)}T{h.group(1)}")
    return sorted(out)


def _is_day(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True

