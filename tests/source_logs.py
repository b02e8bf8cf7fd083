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
