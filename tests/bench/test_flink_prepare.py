"""bench/flink/prepare.py: the Flink bench job's input is every row in replay order (arrival, split, offset) with
the periodic ticks interleaved, also when files' arrival ranges overlap (stragglers across a generator's cut, a
file inside another, equal arrivals in two files), while only one file and its stragglers are in memory."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "flink"))

from prepare import prepare, record_dtype  # noqa: E402

from event_replay.semantics.config import parse_config  # noqa: E402

INTERVAL = 200


def _write(folder: Path, name: str, rows: list[tuple]) -> None:
    split, offset, arrival, event, key, value = zip(*rows)
    pq.write_table(pa.table({"split": list(split), "offset": pa.array(offset, pa.int64()),
                             "arrival_time": pa.array(arrival, pa.int64()), "event_time": pa.array(event, pa.int64()),
                             "key": list(key), "value": pa.array(value, pa.float64())}), folder / name)


def _expected(rows: list[tuple], splits: list[str]) -> list[tuple]:
    """Rows sorted by (arrival, split, offset); a tick T (a multiple of the interval, start <= T < end) after every
    row with arrival <= T."""
    ordered = sorted(rows, key=lambda r: (r[2], splits.index(r[0]), r[1]))
    start, end = ordered[0][2], max(r[2] for r in rows)
    ticks = list(range(-(-start // INTERVAL) * INTERVAL, end, INTERVAL))
    out, t = [], 0
    for r in ordered:
        while t < len(ticks) and ticks[t] < r[2]:
            out.append((1, ticks[t]))
            t += 1
        out.append((0, splits.index(r[0]), r[1], r[2], r[3], r[5], r[4]))
    out += [(1, tick) for tick in ticks[t:]]
    return out


def test_overlapping_files_come_out_in_replay_order(tmp_path):
    rnd = random.Random(3)
    log = tmp_path / "log"
    log.mkdir()
    rows, offsets = [], {"p0": 0, "p1": 0}
    for i in range(3000):
        s = rnd.choice(["p0", "p1"])
        arrival = 1000 + 7 * i + (rnd.randint(0, 900) if rnd.random() < 0.05 else 0)  # stragglers
        rows.append((s, offsets[s], arrival, arrival - rnd.randint(0, 500), f"k{rnd.randint(0, 9)}",
                     round(rnd.uniform(-5, 5), 2)))
        offsets[s] += 1
    # Files cut in write order (a straggler's arrival lies past the cut), one file inside another's range, and a
    # file whose first arrival equals rows of the file before it.
    _write(log, "a.parquet", rows[:1000])
    _write(log, "b.parquet", rows[1000:2000])
    _write(log, "c.parquet", rows[2000:2990])
    _write(log, "d.parquet", [rows[2995], rows[2990]])
    _write(log, "e.parquet", rows[2991:2995] + rows[2996:])
    # Two files starting at one arrival: the first one's row (p1) must wait for the second's (p0, before it).
    tied = [("p1", 10_000, 99_999, 99_000, "k1", 1.25), ("p0", 10_000, 99_999, 99_100, "k2", 2.5),
            ("p0", 10_001, 100_500, 99_200, "k3", 3.75)]
    _write(log, "f.parquet", tied[:1])
    _write(log, "g.parquet", tied[1:])
    rows += tied
    cfg = parse_config({"source": {"path": str(log), "splits": ["p0", "p1"]},
                        "watermark": {"max_out_of_orderness": "500ms", "interval": f"{INTERVAL}ms",
                                      "idle_timeout": "1500ms"},
                        "window": {"type": "tumbling", "size": "10s"},
                        "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
                        "output": {"path": str(tmp_path / "out")}})
    info = prepare(cfg, tmp_path / "flink")
    rec = np.fromfile(tmp_path / "flink" / "events.bin", record_dtype("double"))
    got = [(1, int(r["arrival"])) if r["kind"] == 1 else
           (0, int(r["split"]), int(r["offset"]), int(r["arrival"]), int(r["event"]), float(r["value"]),
            r["key"][:r["key_len"]].decode()) for r in rec]
    assert got == _expected(rows, ["p0", "p1"])
    assert info["rows"] == len(rows)
