"""Writes jobs/live/demo/: a stand-in for the live Flink job's output over the demo's sample, which `make demo`
compares the replay with (jobs/live/demo/README.md says what it is).

It is made by Flink 2.3's own classes (the differential harness, tests/flink: the watermark generators,
idleness, the multiplexer and the keyed windows, on the replay clock) from the sample `make demo` writes
(event_replay.samples.days, same seed and sizes), with the settings "production" ran with: the demo
config's, but an idle timeout of 30 s instead of 5 s and a max out-of-orderness of 1 s instead of 500 ms. It is
written the way a sink would write it: JSON lines in dt= folders (the firing's day), the sink's own column names
(key_id, win_start, win_end, events, amount, wm), ISO-8601 window bounds; every firing (the sink appends each
one); and the late side output (the late events as JSON lines). The harness computes count(*) and sum(value)
only, so the live output has no max(value): `replay compare` reports that aggregate as not compared.

    make demo-live        # .venv-flink and the harness are built first (tests/flink/build.sh)
    .venv/bin/python scripts/make_demo_live.py [--out jobs/live/demo]
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "flink"))

FIRST_DAY, DAYS, ROWS_PER_DAY, SPLITS, SEED = "2024-01-01", 3, 5000, 4, 7  # the Makefile's DEMO_* defaults
LIVE_SETTINGS = {"idle_timeout": "30s", "max_out_of_orderness": "1s"}
COLUMNS = {"key": "key_id", "window_start": "win_start", "window_end": "win_end", "cnt": "events", "total": "amount",
           "fire_watermark": "wm"}


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).isoformat(timespec="milliseconds")


def _day(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).strftime("%Y-%m-%d")


def live_config():
    from event_replay.semantics.config import load_config

    cfg = load_config(ROOT / "jobs" / "configs" / "demo_partitioned.yaml")
    first = dt.datetime.fromisoformat(FIRST_DAY).replace(tzinfo=dt.timezone.utc)
    start, end = int(first.timestamp() * 1000), int((first + dt.timedelta(days=DAYS)).timestamp() * 1000)
    # The DAG replays the days [first, last] partition by partition with a flush at the end: one replay of
    # [first day 00:00, day after the last 00:00), the same for Flink.
    cfg = cfg.with_overrides(watermark=dict(LIVE_SETTINGS), replay={"start": start, "end": end})
    return dataclasses.replace(cfg, aggregations={"cnt": "count(*)", "total": "sum(value)"})  # what the harness sums


def sample_rows():
    from event_replay.samples.days import generate_days
    from event_replay.semantics.model import LogRow

    t = generate_days(FIRST_DAY, DAYS, ROWS_PER_DAY, SPLITS, SEED).to_pydict()
    ms = lambda v: int(v.timestamp() * 1000)  # noqa: E731
    return [LogRow(s, o, ms(a), ms(e), k, {"value": int(v)})
            for s, o, a, e, k, v in zip(t["split"], t["offset"], t["arrival_time"], t["event_time"], t["key"],
                                        t["value"])]


def write(out: Path) -> dict[str, int]:
    from flink_harness import run_flink

    cfg = live_config()
    rows = sample_rows()
    (result,) = run_flink([(rows, cfg, list(cfg.source.splits))], timeout_s=3600)  # 1.3M ticks: a minute idle
    staging = out.with_name(out.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    by_day: dict[str, list[str]] = {}
    for f in sorted(result.firings, key=lambda f: (f.window_end, f.key, f.window_start, f.fire_index)):
        fired = f.fire_watermark if f.fire_watermark is not None else f.window_end - 1  # the flush: the end's day
        by_day.setdefault(_day(fired), []).append(json.dumps({
            COLUMNS["key"]: f.key, COLUMNS["window_start"]: _iso(f.window_start),
            COLUMNS["window_end"]: _iso(f.window_end), COLUMNS["cnt"]: f.aggregates["cnt"],
            COLUMNS["total"]: f.aggregates["total"], COLUMNS["fire_watermark"]: f.fire_watermark}))
    late: dict[str, list[str]] = {}
    for lr in sorted(result.late_rows, key=lambda lr: (lr.row.arrival_time, lr.row.split, lr.row.offset)):
        r = lr.row
        late.setdefault(_day(r.arrival_time), []).append(json.dumps({
            "split": r.split, "offset": r.offset, "arrival_time": _iso(r.arrival_time),
            "event_time": _iso(r.event_time), "key": r.key, "value": r.payload["value"]}))
    for folder, days in (("firings", by_day), ("late", late)):
        for day, lines in days.items():
            d = staging / folder / f"dt={day}"
            d.mkdir(parents=True)
            (d / "part-00000.json").write_text("\n".join(lines) + "\n")
    (staging / "README.md").write_text((ROOT / "scripts" / "demo_live_README.md").read_text())
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    return {"rows": len(rows), "firings": len(result.firings), "late_rows": len(result.late_rows)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "jobs" / "live" / "demo"))
    a = ap.parse_args(argv)
    n = write(Path(a.out))
    print(f"demo live output: {n['firings']} firings, {n['late_rows']} late rows of {n['rows']} rows -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
