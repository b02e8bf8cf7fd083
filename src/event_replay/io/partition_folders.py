"""Partition folders on any file system io/fs.py reaches: a day `YYYY-MM-DD` is the folder `dt=YYYY-MM-DD`, an hour
`YYYY-MM-DDTHH` the folder `dt=YYYY-MM-DD/hour=HH`. The same folders hold a partition's rows in the source and its
outputs in each output dataset. This module is the one listing of them and the one place that knows their names
(what a partition means, its clock range and predecessor: history/partitions.py)."""
from __future__ import annotations

import datetime as dt
import re
from typing import Protocol

from .fs import Fs

_DAY_FOLDER = re.compile(r"^dt=(\d{4}-\d{2}-\d{2})$")
_HOUR_FOLDER = re.compile(r"^hour=(\d{2})$")
# In a file's full path (a Spark regex): the last `dt=` folder (group 1, the day) and its `hour=` folder, if any
# (group 3); a day read recursively may hold hour= folders.
FOLDER_IN_PATH = r".*/dt=([0-9]{4}-[0-9]{2}-[0-9]{2})(/hour=([0-9]{2}))?/"


class Folder(Protocol):
    """What io reads of a partition (history/partitions.Partition): its clock range and its folder."""

    id: str
    start_ms: int
    end_ms: int

    @property
    def subpath(self) -> str: ...

    @property
    def hourly(self) -> bool: ...


def folder_of(partition_id: str) -> str:
    """The folder (below the source or an output dataset) of a partition id `YYYY-MM-DD` or `YYYY-MM-DDTHH`."""
    day = partition_id[:10]
    return f"dt={day}/hour={partition_id[11:13]}" if "T" in partition_id else f"dt={day}"


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
