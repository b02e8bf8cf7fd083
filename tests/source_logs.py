"""Small source logs written by the IO tests: a config over one Parquet or CSV source, and a Parquet writer."""
from __future__ import annotations

import datetime as dt
import os

import pyarrow as pa
import pyarrow.parquet as pq

from event_replay.semantics.config import parse_config

UTC = dt.timezone.utc
BASE = 1_700_000_000_000  # an epoch-ms instant


def make_cfg(path, fmt="parquet", out="out", **sections):
    raw = {
        "source": {"path": str(path), "format": fmt},
        "watermark": {"max_out_of_orderness": "1s"},
        "window": {"type": "tumbling", "size": "10s"},
        "aggregations": {"cnt": "count(*)"},
        "output": {"path": str(out)},
    }
    for k, v in sections.items():
        raw.setdefault(k, {}).update(v)
    return parse_config(raw)


def write_parquet(path, columns: dict, schema: pa.Schema | None = None):
    os.makedirs(path, exist_ok=True)
    pq.write_table(pa.table(columns, schema=schema), os.path.join(path, "part-0.parquet"))
    return path


def second_rows(n0: int, n: int, value) -> dict:
    """Columns of rows n0 .. n0 + n - 1 of split `a`, key `k`: row i arrives (and happens) i seconds into
    2024-01-01, offset i; `value(n)` is the value column."""
    return {"split": ["a"] * n, "offset": list(range(n0, n0 + n)),
            "arrival_time": [1_704_067_200_000 + 1000 * i for i in range(n0, n0 + n)],
            "event_time": [1_704_067_200_000 + 1000 * i for i in range(n0, n0 + n)], "key": ["k"] * n,
            "value": value(n)}
