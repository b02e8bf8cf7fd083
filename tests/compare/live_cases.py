"""A "production" log and its live side from the Flink differential harness (Flink 2.3's own classes, tests/flink),
for the compare and calibration tests.

The log: four splits over 2.5 hours of arrival time, a row every 1-3 s per split, event times a few hundred ms
behind, 3% stragglers 2-25 s behind; split p3 pauses for 20 s every two minutes (idle after 5 s, not after 30 s).
The replay's config: tumbling 10 s, allowed lateness 2 s, bounded out-of-orderness 1 s, periodic 200 ms, idle
timeout 5 s, flush. A live job is that log through Flink with some settings changed (`flink_live`), written the way
a sink would: firings with the sink's own column names and time formats, and the late side output.
"""
from __future__ import annotations

import dataclasses
import json
import random
import sys
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flink"))

from event_replay.semantics.config import JobConfig, parse_config  # noqa: E402
from event_replay.semantics.model import LogRow, ReplayResult  # noqa: E402

H = 3_600_000
BASE = 1_704_067_200_000  # 2024-01-01T00:00:00Z: the log starts at 01:00 that day
SPLITS = ["p0", "p1", "p2", "p3"]
SETTINGS = {"max_out_of_orderness": "1s", "idle_timeout": "5s"}
# The live sink's column names (--live-columns maps them).
SINK_COLUMNS = {"key": "user", "window_start": "w_start", "window_end": "w_end", "cnt": "events", "total": "amount",
                "fire_watermark": "wm"}


def production_log(seed: int = 31, hours: float = 2.5) -> list[LogRow]:
    rng = random.Random(seed)
    start, end = BASE + H, BASE + H + int(hours * H)
    rows = []
    for s, split in enumerate(SPLITS):
        t, offset = start + rng.randint(0, 999), 0
        while t < end:
            if split == "p3" and (t - start) % 120_000 < 20_000:
                t += 20_000 - (t - start) % 120_000  # the pause
                continue
            delay = int(rng.expovariate(1 / 300))
            if rng.random() < 0.03:
                delay = rng.randint(2_000, 25_000)
            rows.append(LogRow(split, offset, t, t - delay, f"k{rng.randrange(6)}", {"value": rng.randint(1, 100)}))
            offset += 1
            t += rng.randint(1_000, 3_000)
    return rows


def raw_config(source_path: str = "unused", output_path: str = "unused", **watermark: Any) -> dict[str, Any]:
    return {"source": {"path": source_path, "splits": list(SPLITS)},
            "watermark": {"strategy": "bounded_out_of_orderness", "emit": "periodic", "interval": "200ms",
                          **SETTINGS, **watermark},
            "window": {"type": "tumbling", "size": "10s", "allowed_lateness": "2s"},
            "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
            "replay": {"end_of_input": "flush"}, "output": {"path": output_path}}


def job_config(source_path: str, output_path: str, **watermark: Any) -> JobConfig:
    return parse_config(raw_config(source_path, output_path, **watermark))


def write_log(rows: Sequence[LogRow], root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"split": [r.split for r in rows], "offset": [r.offset for r in rows],
                             "arrival_time": pa.array([r.arrival_time for r in rows], pa.timestamp("ms", "UTC")),
                             "event_time": pa.array([r.event_time for r in rows], pa.timestamp("ms", "UTC")),
                             "key": [r.key for r in rows], "value": [int(r.payload["value"]) for r in rows]}),
                   root / "part-0.parquet")


@dataclasses.dataclass(frozen=True)
class LiveJob:
    """A live job: the log it read and its settings."""
    name: str
    rows: tuple[LogRow, ...]
    watermark: dict[str, Any]
    splits: tuple[str, ...] = tuple(SPLITS)

    def config(self) -> JobConfig:
        raw = raw_config(**self.watermark)
        raw["source"]["splits"] = list(self.splits)
        return parse_config(raw)


def flink_live(jobs: Sequence[LiveJob]) -> dict[str, ReplayResult]:
    """Every live job through Flink's own classes, in one JVM."""
    from flink_harness import run_flink

    results = run_flink([(list(j.rows), j.config(), None) for j in jobs])
    return {j.name: r for j, r in zip(jobs, results)}


def write_sink(result: ReplayResult, root: Path, *, fmt: str = "json", reemit: tuple[int, int] | None = None,
               late_identity: str = "key") -> tuple[Path, Path]:
    """The live job's sink: every firing (a sink that appends each one), its columns named as SINK_COLUMNS, window
    bounds as ISO-8601 text (json) or timestamps (parquet), the fire watermark in epoch ms (null for the flush);
    `reemit` = [lo, hi): the firings whose watermark is in it are written twice (an at-least-once sink restarted
    from a checkpoint re-emits them). The late side output: the late events (key, event_time, value, and split
    and offset when `late_identity` is "split")."""
    import datetime as dt

    def iso(ms: int) -> str:
        return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).isoformat(timespec="milliseconds")

    firings = []
    for f in result.firings:
        copies = 2 if reemit and f.fire_watermark is not None and reemit[0] <= f.fire_watermark < reemit[1] else 1
        firings += [f] * copies
    root.mkdir(parents=True, exist_ok=True)
    sink, late = root / "firings", root / "late"
    sink.mkdir(exist_ok=True)
    late.mkdir(exist_ok=True)
    c = SINK_COLUMNS
    if fmt == "json":
        with open(sink / "part-0.json", "w") as fh:
            for f in firings:
                fh.write(json.dumps({c["key"]: f.key, c["window_start"]: iso(f.window_start),
                                     c["window_end"]: iso(f.window_end), c["cnt"]: f.aggregates["cnt"],
                                     c["total"]: f.aggregates["total"], c["fire_watermark"]: f.fire_watermark}) + "\n")
    else:
        pq.write_table(pa.table({
            c["key"]: [f.key for f in firings],
            c["window_start"]: pa.array([f.window_start for f in firings], pa.timestamp("ms", "UTC")),
            c["window_end"]: pa.array([f.window_end for f in firings], pa.timestamp("ms", "UTC")),
            c["cnt"]: pa.array([f.aggregates["cnt"] for f in firings], pa.int64()),
            c["total"]: pa.array([f.aggregates["total"] for f in firings], pa.int64()),
            c["fire_watermark"]: pa.array([f.fire_watermark for f in firings], pa.int64())}), sink / "part-0.parquet")
    recs = []
    for lr in result.late_rows:
        r = lr.row
        rec = {"key": r.key, "event_time": r.event_time, "value": r.payload["value"]}
        if late_identity == "split":
            rec.update({"split": r.split, "offset": r.offset})
        recs.append(rec)
    if fmt == "json":
        with open(late / "part-0.json", "w") as fh:
            fh.writelines(json.dumps(rec) + "\n" for rec in recs)
    else:
        cols = ["key", "event_time", "value"] + (["split", "offset"] if late_identity == "split" else [])
        pq.write_table(pa.table({k: [rec[k] for rec in recs] for k in cols},
                                schema=pa.schema([(k, pa.string() if k in ("key", "split") else pa.int64())
                                                  for k in cols])), late / "part-0.parquet")
    return sink, late


def duplicated_hour(result: ReplayResult) -> tuple[int, int]:
    """The second hour of the live job's firings (by fire watermark): what a restart re-emits in the tests."""
    wms = sorted(f.fire_watermark for f in result.firings if f.fire_watermark is not None)
    lo = wms[0] + H
    return lo, lo + H
