"""Carried state between partitions (docs/semantics.md "Partitions"; SEMANTICS §6 `hold`): what partition P leaves
for its successor.

Partitions (days or hours by arrival time) are io/partitions.py; the files are written and read by
io/state_files.py. This module is the model: what the state holds, and when it can be continued.

The state is small by construction (see the timeline/ and windows/ packages for why it is enough):
    manifest.json  format version, config fingerprint, partition, predecessor, emission, the history's first
                   tick (idleness of splits without rows), the stream watermark and idle flag at the end,
                   the declared splits, whether the partition flushed, and each split's last offset (the largest
                   offset of its clean rows so far), so that the next partition quarantines a redelivery or an
                   offset going back across the cut exactly as one replay of the range would (io/offsets.py).
    splits/        per split: periodic: the tick of its last row group `t` and the max timestamp `m` after it
                   (silence advance included); per-event: `t` null, `m` = its published watermark.
    rows/          the rows still held by windows not purged at the end (cleanup time > stream watermark), with
                   their original `wm_before`; fire indexes and early/late are re-derived from them.
Staged with the partition's outputs and committed with them (io/commit.py) into `<output.path>/_state/<partition>/`.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from ..io import state_files
from ..io.partitions import Partition
from ..layout import state_dir
from ..semantics.config import ConfigError, JobConfig, to_raw

FORMAT_VERSION = 2  # 2: last_offsets


class StateError(RuntimeError):
    """The carried state cannot be used: missing, or written by another config/format/predecessor."""


def require_declared_splits(cfg: JobConfig) -> None:
    """A partitioned history needs `source.splits` (docs/semantics.md, "Partitions"): without it the splits are the
    ones seen in the range, so a split first seen in a later partition would hold a replay of the whole range back
    from its start, but not the partitions replayed before it. Refused (exit 2) before Spark starts. Processing
    time has no watermarks, so no split holds anything back there."""
    if cfg.source.splits is None and cfg.window.time != "processing":
        raise ConfigError("source.splits", "a partition-by-partition replay needs the source's splits declared "
                                           "(e.g. splits: [p0, p1]): a split first seen in a later partition would "
                                           "hold back the whole range but not the partitions before it")


def fingerprint(cfg: JobConfig) -> str:
    """A hash of the config keys that change what a replay computes (not paths, range or end of input)."""
    raw = to_raw(cfg)
    raw["source"].pop("path", None)
    raw.pop("output", None)
    raw.pop("replay", None)
    return hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class Manifest:
    format_version: int
    fingerprint: str
    partition: str
    previous: str | None  # None: this partition started the history
    emit: str  # periodic | per_event
    origin_tick: int | None  # the history's first tick (periodic)
    stream_watermark: int
    stream_idle: bool
    splits: list[str] = field(default_factory=list)
    flushed: bool = False
    last_offsets: dict[str, int] = field(default_factory=dict)  # split -> largest clean offset so far


def last_offsets_after(rows, carried: "Manifest | None", known: dict[str, int] | None = None) -> dict[str, int]:
    """Each split's last offset after a partition: the largest of its clean rows (`rows`), else the carried one.
    `known`: those largest offsets, when the source already has them (no pass over the rows)."""
    from pyspark.sql import functions as F

    out = dict(carried.last_offsets) if carried is not None else {}
    if known is None:
        known = {s: int(o) for s, o in rows.groupBy("split").agg(F.max("offset")).collect()}  # a row per split
    for split, offset in known.items():
        out[split] = max(int(offset), out.get(split, int(offset)))
    return dict(sorted(out.items()))


@dataclass
class CarriedState:
    """The state a partition continues from (DataFrames are read lazily from the state folder)."""

    manifest: Manifest
    splits: Any  # DataFrame split, t, m
    rows: Any  # DataFrame: input columns + wm_before


def read_state(spark, cfg: JobConfig, partition: Partition, previous_id: str | None = None) -> CarriedState:
    """The state `partition` continues from (its predecessor's), validated; a clear StateError otherwise."""
    prev = previous_id or partition.previous().id
    folder = state_dir(cfg.output.path, prev)
    text = state_files.read_manifest_text(spark, folder)
    if text is None:
        raise StateError(f"partition {partition.id} continues from {prev}, but there is no carried state under "
                         f"{folder}: replay {prev} first (or start a new history with --first)")
    try:
        m = Manifest(**json.loads(text))
    except (TypeError, ValueError) as exc:
        raise StateError(f"carried state {folder}/{state_files.MANIFEST} is unreadable: {exc}") from None
    if m.format_version != FORMAT_VERSION:
        raise StateError(f"carried state {folder} has format version {m.format_version}, this job writes "
                         f"{FORMAT_VERSION}: replay the history again from its first partition")
    fp = fingerprint(cfg)
    if m.fingerprint != fp:
        raise StateError(f"carried state {folder} was written with another config (fingerprint {m.fingerprint}, "
                         f"now {fp}): the watermark/window/aggregation settings changed; replay from --first")
    if m.partition != prev:
        raise StateError(f"carried state {folder} belongs to partition {m.partition}, expected {prev}")
    if m.flushed:
        raise StateError(f"partition {prev} ended its history with end_of_input=flush (its windows fired at the "
                         f"end of input): {partition.id} cannot continue it; rerun {prev} with --end-of-input hold")
    emit = cfg.watermark.emit
    if m.emit != emit:
        raise StateError(f"carried state {folder} was written for emit={m.emit}, the config says {emit}")
    splits, rows = state_files.read_frames(spark, folder)
    return CarriedState(manifest=m, splits=splits, rows=rows)


def stage_state(spark, cfg: JobConfig, manifest: Manifest, splits, rows, staging: str) -> tuple[str, str]:
    """Write a partition's state under `staging`; return the move (staged folder, `_state/<partition>`) that
    commits it together with the partition's outputs (io/commit.py)."""
    text = json.dumps(asdict(manifest), indent=2, sort_keys=True) + "\n"
    folder = state_files.stage_files(spark, staging, manifest.partition, text, splits, rows)
    return folder, state_dir(cfg.output.path, manifest.partition)


def write_state(spark, cfg: JobConfig, manifest: Manifest, splits, rows) -> str:
    """Write a partition's state on its own, all or nothing; a rerun replaces it. (`replay run --partition`
    stages it with the outputs and commits both at once.)"""
    from ..io.commit import stage_and_commit
    from ..io.fs import fs_for

    def stage(staging: str) -> tuple[str, list[tuple[str, str]]]:
        move = stage_state(spark, cfg, manifest, splits, rows, staging)
        return move[1], [move]

    return stage_and_commit(fs_for(cfg.output.path, spark), cfg.output.path, stage)
