"""The state one range of the replay clock leaves for the next, as plain data: the engine takes it (None: the history
starts) and returns it (`engine.replay`); history/ keeps it between partitions (what it means: docs/semantics.md,
"Partitions"; the timeline's and the windows' parts: timeline/carry.py, windows.carried_rows)."""
from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


@dataclass
class Carry:
    origin_tick: int | None  # the history's first tick (periodic): idleness of splits without rows counts from it
    stream_watermark: int  # the stream watermark at the range's end
    stream_idle: bool
    splits: list[str]  # every split of the history so far, sorted
    last_offsets: dict[str, int] = field(default_factory=dict)  # split -> largest clean offset so far (io/offsets.py)
    split_states: DataFrame | None = None  # split, t, m (contract.SPLIT_STATE_SCHEMA)
    rows: DataFrame | None = None  # the rows still held by windows not purged at the end, with their `wm_before`


def last_offsets_after(rows: DataFrame, carried: Carry | None, known: dict[str, int] | None = None) -> dict[str, int]:
    """Each split's last offset after a range: the largest of its clean rows (`rows`), else the carried one.
    `known`: those largest offsets, when the source already has them (no pass over the rows)."""
    out = dict(carried.last_offsets) if carried is not None else {}
    if known is None:
        known = {s: int(o) for s, o in rows.groupBy("split").agg(F.max("offset")).collect()}  # a row per split
    for split, offset in known.items():
        out[split] = max(int(offset), out.get(split, int(offset)))
    return dict(sorted(out.items()))
