"""Carried state between partitions (docs/semantics.md "Partitions"; SEMANTICS §6 `hold`): what partition P leaves
for its successor, and when it can be continued. The engine's part is plain data (engine/carry.py's `Carry`); this
module adds what makes it a partition's: the manifest's identity (format, config fingerprint, partition,
predecessor, emission, whether it flushed). Its files: state_files.py.

The state is small by construction (see engine/timeline/ and engine/windows/ for why it is enough):
    manifest.json  format version, config fingerprint, partition, predecessor, emission, the history's first
                   tick (idleness of splits without rows), the stream watermark and idle flag at the end,
                   the declared splits, whether the partition flushed, and each split's last offset (the largest
                   offset of its clean rows so far), so that the next partition quarantines a redelivery or an
                   offset going back across the cut exactly as one replay of the range would (io/offsets.py).
    splits/        per split: periodic: the tick of its last row group `t` and the max timestamp `m` after it
                   (silence advance included); per-event: `t` null, `m` = its published watermark.
    rows/          the rows still held by windows not purged at the end (cleanup time > stream watermark), with
                   their original `wm_before`; fire indexes and early/late are re-derived from them.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

from ..engine.carry import Carry
from ..semantics.config import JobConfig, to_raw
from ..semantics.config_keys import ConfigError

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

    @staticmethod
    def after(cfg: JobConfig, partition: str, previous: str | None, carry: Carry) -> "Manifest":
        """The manifest of `partition`'s state: the engine's `carry` at its end, continuing `previous`."""
        return Manifest(format_version=FORMAT_VERSION, fingerprint=fingerprint(cfg), partition=partition,
                        previous=previous, emit=cfg.watermark.emit, origin_tick=carry.origin_tick,
                        stream_watermark=carry.stream_watermark, stream_idle=carry.stream_idle,
                        splits=list(carry.splits), flushed=cfg.replay.end_of_input == "flush",
                        last_offsets=dict(carry.last_offsets))


@dataclass
class CarriedState:
    """The state a partition continues from: its manifest and the engine's Carry (DataFrames read lazily)."""

    manifest: Manifest
    carry: Carry


def checked_manifest(cfg: JobConfig, text: str, folder: str, path: str, continuing: str, prev: str) -> Manifest:
    """The manifest `text` (file `path` of `folder`, partition `prev`'s state) if partition `continuing` can continue
    it under `cfg`; a clear StateError otherwise."""
    try:
        m = Manifest(**json.loads(text))
    except (TypeError, ValueError) as exc:
        raise StateError(f"carried state {path} is unreadable: {exc}") from None
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
                         f"end of input): {continuing} cannot continue it; rerun {prev} with --end-of-input hold")
    emit = cfg.watermark.emit
    if m.emit != emit:
        raise StateError(f"carried state {folder} was written for emit={m.emit}, the config says {emit}")
    return m


def manifest_json(manifest: Manifest) -> str:
    return json.dumps(asdict(manifest), indent=2, sort_keys=True) + "\n"
