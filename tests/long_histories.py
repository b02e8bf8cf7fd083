"""Long histories that are cheap to make, for the reports' tests: two years of days and a year of hours, a few
rows per partition, replayed in the test's Spark session (a partition costs the replay its folders, not its rows).

- `two_years_of_days`: 730 `dt=` partitions from samples/days.py (2 splits, a few rows a day, late rows across
  the day boundary), replayed as one range;
- `a_year_of_hours`: `dt=/hour=` partitions, the 24 hours of four days spread over a year, first to last day
  (sparse: months of silence between the blocks), each block a range that continues from the block before (the
  latest state).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from event_replay.pipeline import PartitionSpan
from event_replay.range_replay import run_range
from event_replay.samples.days import generate_days, write_days
from event_replay.semantics.config import JobConfig, parse_config

HOUR_MS = 3_600_000


@dataclass(frozen=True)
class History:
    name: str
    cfg: JobConfig
    partitions: list[str]  # every partition replayed, in order


def config(source: Path, out: Path) -> JobConfig:
    """The job of both histories (the demo's settings), also written as `<source>/../job.yaml` for the commands."""
    raw = {"source": {"path": str(source), "splits": ["p0", "p1"]},
           "watermark": {"max_out_of_orderness": "500ms", "interval": "200ms", "idle_timeout": "5s"},
           "window": {"type": "tumbling", "size": "10s", "allowed_lateness": "2s"},
           "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
           "replay": {"end_of_input": "flush"}, "output": {"path": str(out)}}
    config_file(out).write_text(yaml.safe_dump(raw))
    return parse_config(raw)


def config_file(out: Path) -> Path:
    return out.parent / "job.yaml"


def _request(first: str, last: str, previous: str | None, end_of_input: str) -> PartitionSpan:
    return PartitionSpan.between(first_id=first, last_id=last, first=previous is None, previous=previous,
                        end_of_input=end_of_input, allow_missing=False)


def two_years_of_days(spark, root: Path, rows_per_day: int = 3) -> History:
    table = generate_days("2024-01-01", days=730, rows_per_day=rows_per_day, splits=2, rate=1.0,
                          cross_day_stragglers=1)
    ids = write_days(root / "source", table)
    cfg = config(root / "source", root / "out")
    run_range(spark, cfg, _request(ids[0], ids[-1], None, "flush"), progress=lambda line: None)
    return History("two years of days", cfg, ids)


def _hour_rows(hour_start_ms: int, rng: np.random.Generator, offsets: dict[str, int]) -> list[dict]:
    """Three rows in the hour's first minute, out of order, on both splits; now and then one an hour late."""
    rows = []
    for i in range(3):
        split = f"p{i % 2}"
        arrival = hour_start_ms + 1_000 * (i + 1) + int(rng.integers(0, 500))
        event = arrival - int(rng.integers(0, 1_500)) - (HOUR_MS if rng.random() < 0.1 else 0)
        rows.append({"split": split, "offset": offsets.get(split, 0), "arrival_time": arrival, "event_time": event,
                     "key": f"k{int(rng.integers(0, 3))}", "value": float(rng.integers(1, 100))})
        offsets[split] = offsets.get(split, 0) + 1
    return rows


def write_hours(source: Path, days: list[dt.date], seed: int = 11) -> list[str]:
    """The 24 hour partitions of each day given, as `dt=D/hour=HH/part-00000.parquet`; returns their ids."""
    rng, offsets, ids = np.random.default_rng(seed), {}, []
    ts = pa.timestamp("ms", tz="UTC")
    for day in days:
        for h in range(24):
            start = int(dt.datetime(day.year, day.month, day.day, h, tzinfo=dt.timezone.utc).timestamp() * 1000)
            t = pa.Table.from_pylist(_hour_rows(start, rng, offsets))
            t = t.set_column(2, "arrival_time", t["arrival_time"].cast(ts)).set_column(3, "event_time",
                                                                                     t["event_time"].cast(ts))
            folder = source / f"dt={day.isoformat()}" / f"hour={h:02d}"
            folder.mkdir(parents=True)
            pq.write_table(t, folder / "part-00000.parquet")
            ids.append(f"{day.isoformat()}T{h:02d}")
    return ids


def a_year_of_hours(spark, root: Path) -> History:
    days = [dt.date(2024, 1, 1), dt.date(2024, 4, 15), dt.date(2024, 8, 1), dt.date(2024, 12, 31)]
    ids = write_hours(root / "source", days)
    cfg = config(root / "source", root / "out")
    previous = None
    for b in range(len(days)):
        block = ids[24 * b: 24 * (b + 1)]
        last = b == len(days) - 1
        run_range(spark, cfg, _request(block[0], block[-1], previous, "flush" if last else "hold"),
                  progress=lambda line: None)
        previous = block[-1]
    return History("a year of hours", cfg, ids)
