"""`replay run` against Flink directly (issue 16 item 6): the Flink harness's cases written as Parquet logs, replayed
by the job `replay run` runs (job.run_replay, or job.run_partition hour by hour), the outputs read back from disk and
compared with what Flink's own classes emit for the same case: firings, late rows and watermark changes.

The rest of the suite proves engine = reference and reference = Flink; this closes the loop without the reference,
through the IO layer too. A sample runs in `make test`; every case of tests/flink/test_flink_differential.py (and
the shapes below) in `make test-integration`.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from event_replay.semantics.config import JobConfig  # noqa: E402
from event_replay.semantics.model import LogRow, ReplayResult  # noqa: E402
from flink_harness import declared_splits, run_flink  # noqa: E402
from flink_cases import ALL, config  # noqa: E402
from shape_cases import with_having  # noqa: E402

pytestmark = [pytest.mark.flink, pytest.mark.spark]

H = 3_600_000  # an hour: the partition replays below cut the log at hour boundaries


def _cut_cases() -> list[tuple[str, list, JobConfig, None]]:
    """Shapes that need `replay run` itself: a slide that does not divide the size, sessions and silence advance
    across a partition cut (replayed hour by hour), processing-time sessions across a cut, a timeline of more than a
    million ticks."""
    out = []
    rows = [LogRow(f"p{i % 3}", i, 5000 + 173 * i, 5000 + 173 * i - (i * 7919) % 2500, f"k{i % 4}", {"value": i})
            for i in range(200)]
    out.append(("sliding_not_dividing", rows,
                config(source={"splits": ["p0", "p1", "p2"]},
                       watermark={"max_out_of_orderness": 800, "interval": 200, "idle_timeout": 1500},
                       window={"type": "sliding", "size": 2500, "slide": 1000, "offset": 300,
                               "allowed_lateness": 700}), None))
    # Sessions open across the hour boundary (gap 4 s, rows every 1.5-2.5 s around it), a straggler after it.
    rows = [LogRow(f"p{i % 2}", i, H - 20_000 + 1700 * i + (i % 3) * 400, H - 20_000 + 1700 * i - (i % 4) * 900,
                   f"k{i % 2}", {"value": i}) for i in range(25)]
    out.append(("session_across_cut", rows,
                config(source={"splits": ["p0", "p1"]}, watermark={"max_out_of_orderness": 1000, "interval": 500},
                       window={"type": "session", "gap": 4000, "allowed_lateness": 2000},
                       replay={"start": 0, "end": 2 * H, "end_of_input": "flush"}), None))
    # p1 falls silent before the cut; its logical clock advances across it and lets the windows fire.
    rows = [LogRow("p0", i, H - 9000 + 600 * i, H - 9000 + 600 * i, "a", {"value": 1}) for i in range(30)]
    rows += [LogRow("p1", i, H - 10_000 + 500 * i, H - 10_000 + 500 * i, "b", {"value": 2}) for i in range(6)]
    out.append(("silence_advance_across_cut", rows,
                config(source={"splits": ["p0", "p1"]},
                       watermark={"max_out_of_orderness": 200, "interval": 200, "advance_after_silence": 1000},
                       window={"type": "tumbling", "size": 2000}, replay={"start": 0, "end": 2 * H}), None))
    # Processing time: sessions on arrival time open across the hour boundary, some rows exactly at a session's
    # e - 1 (they join it) or at e (a new session): `hold` carries the open sessions and their timers across the cut.
    arrivals = sorted({H - 15_000 + 1300 * i + (i % 4) * 700 for i in range(24)} | {H - 1, H, H + 2999})
    rows = [LogRow(f"p{i % 2}", i, t, 0, f"k{i % 2}", {"value": i}) for i, t in enumerate(arrivals)]
    out.append(("pt_session_across_cut", rows,
                config(source={"splits": ["p0", "p1"]}, window={"type": "session", "gap": 3000, "time": "processing"},
                       replay={"start": 0, "end": 2 * H, "end_of_input": "flush"}), None))
    # Issue 50: a daily-running-total shape (cumulate windows of 20 s in 5 s steps, lateness 3 s) with no key and a
    # HAVING, open across the hour boundary (hold carries the rows of the max-size window), stragglers late for
    # the short windows and accepted by the long ones.
    rows = [LogRow(f"p{i % 3}", i, H - 30_000 + 900 * i, H - 30_000 + 900 * i - (i % 6) * 1700, None,
                   {"value": i % 7}) for i in range(70)]
    out.append(("cumulate_keyless_having_across_cut", rows,
                config(source={"splits": ["p0", "p1", "p2"], "columns": {"key": None}},
                       watermark={"max_out_of_orderness": 1000, "interval": 500},
                       window={"type": "cumulate", "size": 20_000, "step": 5000, "allowed_lateness": 3000},
                       replay={"start": 0, "end": 2 * H, "end_of_input": "flush"}, having="cnt % 3 <> 1"), None))
    # 1.2 million ticks (interval 1 ms) over 20 minutes: the lookups take their large-timeline paths.
    rows = [LogRow(f"p{i % 2}", i, 1000 + 6000 * i, 1000 + 6000 * i - (i % 5) * 3000, f"k{i % 3}", {"value": i})
            for i in range(200)]
    out.append(("million_ticks", rows,
                config(source={"splits": ["p0", "p1"]}, watermark={"max_out_of_orderness": 4000, "interval": 1},
                       window={"type": "tumbling", "size": 60_000}, replay={"start": 0, "end": 1_200_000}), None))
    return out


CUT_CASES = _cut_cases()
PARTITIONED = {"session_across_cut", "silence_advance_across_cut", "pt_session_across_cut",
               "cumulate_keyless_having_across_cut"}
CASES = {name: (rows, cfg, declared) for name, rows, cfg, declared in ALL + CUT_CASES}
SAMPLE = ["A", "B", "sliding_not_dividing", "session_across_cut", "pt_issue16_repro", "pt_session_across_cut",
          "cumulate_keyless_having_across_cut"]


def _replayable(name: str) -> bool:
    """Whether the log is valid input (docs/semantics.md, "Quarantine"): the IO layer quarantines times before 1970
    and offsets that do not rise with arrival in their split (the generated side-input rows reuse sampled arrival
    times); Flink takes both."""
    rows = CASES[name][0]
    last: dict[str, int] = {}
    for r in sorted(rows, key=LogRow.replay_order):
        if r.arrival_time < 0 or r.event_time < 0 or r.offset <= last.get(r.split, -1):
            return False
        last[r.split] = r.offset
    return True


# Cases with times before 1970 are left out: the IO layer quarantines them (no partition can replay them), Flink
# takes them; everything else is compared.
REST = [n for n in CASES if n not in SAMPLE and _replayable(n)]


@pytest.fixture(scope="module")
def flink_results():
    """Flink's result of a case, each group (the sample, the rest) run through one JVM when first asked."""
    cache: dict[str, ReplayResult] = {}

    def result(name: str) -> ReplayResult:
        if name not in cache:
            group = SAMPLE if name in SAMPLE else REST
            results = run_flink([CASES[n] for n in group])
            cache.update((n, with_having(r, CASES[n][1])) for n, r in zip(group, results))
        return cache[name]
    return result


def _job_config(name: str, tmp: Path) -> JobConfig:
    rows, cfg, declared = CASES[name]
    side = set(cfg.source.side_inputs)
    splits = cfg.source.splits
    if declared is not None or splits is not None or name in PARTITIONED:
        splits = tuple(s for s in declared_splits(rows, cfg, declared) if s not in side)
    source = dataclasses.replace(cfg.source, path=str(tmp / "log"), splits=splits)
    return dataclasses.replace(cfg, source=source, output=dataclasses.replace(cfg.output, path=str(tmp / "out")))


LOG_SCHEMA = pa.schema([("split", pa.string()), ("offset", pa.int64()), ("arrival_time", pa.int64()),
                        ("event_time", pa.int64()), ("key", pa.string()), ("value", pa.int64())])


def _write_log(rows: list[LogRow], root: Path, hourly: bool, keyless: bool = False) -> None:
    groups: dict[str, list[LogRow]] = {} if rows else {".": []}  # an empty log is one empty file
    for r in rows:
        sub = f"dt=1970-01-01/hour={r.arrival_time // H:02d}" if hourly else "."
        groups.setdefault(sub, []).append(r)
    for sub, part in groups.items():
        (root / sub).mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"split": [r.split for r in part], "offset": [r.offset for r in part],
                                 "arrival_time": [r.arrival_time for r in part],
                                 "event_time": [r.event_time for r in part], "key": [str(r.key) for r in part],
                                 "value": [int(r.payload.get("value", 0)) for r in part]}, schema=LOG_SCHEMA),
                       root / sub / "part-0.parquet")
        if keyless:  # a log without a key column, as a keyless job reads
            table = pq.read_table(root / sub / "part-0.parquet").drop_columns(["key"])
            pq.write_table(table, root / sub / "part-0.parquet")


def _replay_run(spark, name: str, tmp: Path) -> dict[str, list]:
    from event_replay.job import run_replay
    from partition_cases import run_partition

    rows, _, _ = CASES[name]
    cfg = _job_config(name, tmp)
    _write_log(rows, tmp / "log", hourly=name in PARTITIONED, keyless=cfg.source.keyless)
    if name in PARTITIONED:
        run_partition(spark, cfg, "1970-01-01T00", first=True)
        run_partition(spark, cfg, "1970-01-01T01", end_of_input=cfg.replay.end_of_input)
    else:
        run_replay(spark, cfg)

    from pyspark.sql import functions as F

    def read(ds):
        return spark.read.option("recursiveFileLookup", "true").parquet(str(tmp / "out" / ds))
    windows = read("windows").select("key", F.unix_millis("window_start").alias("s"),
                                     F.unix_millis("window_end").alias("e"), "fire_index", "fire_watermark_ms",
                                     "fire_reason", "cnt", "total")
    return {
        "firings": sorted(tuple(r) for r in windows.collect()),
        "late": sorted((r["split"], r["offset"], r["late_watermark_ms"]) for r in read("late_events").collect()),
        "watermarks": sorted((w["replay_time_ms"], w["scope"], w["split"] or "", w["watermark_ms"], w["idle"])
                             for w in read("watermarks").collect()),
    }


def _flink(name: str, result: ReplayResult) -> dict[str, list]:
    side = set(CASES[name][1].source.side_inputs)
    return {
        "firings": sorted((None if f.key is None else str(f.key), f.window_start, f.window_end, f.fire_index, f.fire_watermark, f.fire_reason,
                           f.aggregates["cnt"], f.aggregates["total"]) for f in result.firings),
        "late": sorted((lr.row.split, lr.row.offset, lr.late_watermark) for lr in result.late_rows),
        "watermarks": sorted((c.replay_time, c.scope, c.split or "", c.watermark, c.idle) for c in result.watermarks
                             if c.split not in side),
    }


def _check(spark, flink_results, name: str, tmp: Path) -> None:
    got, want = _replay_run(spark, name, tmp), _flink(name, flink_results(name))
    for part in want:
        only_run = [x for x in got[part] if x not in want[part]][:5]
        only_flink = [x for x in want[part] if x not in got[part]][:5]
        assert got[part] == want[part], f"{name} {part}: only replay run {only_run}; only Flink {only_flink}"


@pytest.mark.parametrize("name", SAMPLE)
def test_replay_run_equals_flink_sample(spark, flink_results, name, tmp_path):
    _check(spark, flink_results, name, tmp_path)


@pytest.mark.integration
@pytest.mark.parametrize("name", REST)
def test_replay_run_equals_flink_all(spark, flink_results, name, tmp_path):
    _check(spark, flink_results, name, tmp_path)
