"""Python driver of the Flink differential harness (SEMANTICS §9).

`run_flink(cases)` writes one case file per (rows, cfg, declared_splits), runs ONE JVM over all of them (a MiniCluster
started once, one parallelism-1 job per case: tests/flink/harness/*.java) and parses the outputs back into the
model types, so they compare directly with `event_replay.semantics.reference.replay`.

The source's pacing is decided here, from the config alone: the rows of the replay range in replay order, and the
periodic ticks interleaved (a tick at T after every row with arrival <= T). Everything else (generators, idleness,
combining, windows, lateness, late side output) is Flink's own classes. Processing time (`window.time: processing`):
the rows in replay order, then one tick at the range end; the harness moves the window operator's processing-time
clock to each row's arrival and to that end (harness/ClockOperator.java, ManualProcessingTimeService.java).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from event_replay.semantics.config import JobConfig
from event_replay.semantics.row_filter import RowFilter
from event_replay.semantics.reference import declared_splits_of as declared_splits
from event_replay.semantics.reference import replay_range_of as replay_range
from event_replay.semantics.model import (FIRE_END_OF_INPUT, Firing, LateRow, LogRow, ReplayResult,
                                          WatermarkChange)

ROOT = Path(__file__).resolve().parents[2]
BUILD_SH = ROOT / "tests" / "flink" / "build.sh"
OUT_DIR = Path(os.environ.get("FLINK_HARNESS_OUT", ROOT / "build" / "flink-harness"))

Case = tuple[Sequence[LogRow], JobConfig, Optional[Sequence[str]]]


class FlinkHarnessError(RuntimeError):
    pass


def ensure_built() -> str:
    """Runs build.sh (idempotent, quick when up to date); returns the classpath of a harness run."""
    if shutil.which("java") is None:
        raise FlinkHarnessError("java not found on PATH: the Flink harness needs Java 17")
    proc = subprocess.run(["bash", str(BUILD_SH)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise FlinkHarnessError(f"tests/flink/build.sh failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return (OUT_DIR / "classpath.txt").read_text().strip()


# -- cases --------------------------------------------------------------------------------------------

def _check_name(name: str) -> str:
    if any(c in name for c in "\t\n\r"):
        raise ValueError(f"split name {name!r}: tabs and newlines cannot go into a case file")
    return name


def _opt(v: int | None) -> str:
    return "-" if v is None else str(int(v))


def write_case(path: Path, rows: Sequence[LogRow], cfg: JobConfig, declared: Sequence[str] | None
               ) -> tuple[list[str], dict[tuple[str, int], LogRow]]:
    """Writes one case file; returns the split order and the rows of the range by (split, offset)."""
    start, end, in_range = replay_range(list(rows), cfg)
    splits = declared_splits(in_range, cfg, declared)
    index = {s: i for i, s in enumerate(splits)}
    side = set(cfg.source.side_inputs)
    wm, win = cfg.watermark, cfg.window
    conf = {"strategy": wm.strategy, "delay": _opt(wm.max_out_of_orderness_ms), "emit": wm.emit,
            "interval": _opt(wm.interval_ms), "idle": _opt(wm.idle_timeout_ms),
            "silence": _opt(wm.advance_after_silence_ms), "window": win.type, "size": _opt(win.size_ms),
            "slide": _opt(win.slide_ms), "step": _opt(win.step_ms), "offset": _opt(win.offset_ms), "gap": _opt(win.gap_ms),
            "lateness": _opt(win.allowed_lateness_ms), "eoi": cfg.replay.end_of_input, "time": win.time}
    lines = ["C\t" + "\t".join(f"{k}={v}" for k, v in conf.items())]
    lines += [f"S\t{_check_name(s)}\t{int(s in side)}" for s in splits]
    ordered = sorted((r.timed_by(cfg.window.time) for r in in_range), key=LogRow.replay_order)
    # The job's filter, judged on each row as logged; Flink's job then drops it between the watermark operator and
    # the window (harness/Windowed.java).
    row_filter = RowFilter(cfg.filter, cfg.source.columns) if cfg.filter is not None else None
    logged = {(r.split, r.offset): r for r in in_range}
    by_id: dict[tuple[str, int], LogRow] = {}

    def row_line(r: LogRow) -> str:
        if (r.split, r.offset) in by_id:
            raise ValueError(f"duplicate (split, offset) {(r.split, r.offset)}")
        by_id[(r.split, r.offset)] = r
        value = r.payload.get("value", 0)
        if value is None or isinstance(value, bool) or int(value) != value:
            raise ValueError(f"payload value must be an int for the harness: {r}")
        key = json.dumps(r.key)  # opaque text in Java; json escapes tabs and newlines
        line = f"R\t{index[r.split]}\t{r.offset}\t{r.arrival_time}\t{r.event_time}\t{int(value)}\t{key}"
        return line if row_filter is None else f"{line}\t{int(row_filter.keeps(logged[(r.split, r.offset)]))}"

    i = 0
    if wm.periodic:
        interval = wm.interval_ms
        tick = -(-start // interval) * interval  # the first multiple of the interval at or after start
        while tick < end:
            while i < len(ordered) and ordered[i].arrival_time <= tick:
                lines.append(row_line(ordered[i]))
                i += 1
            lines.append(f"T\t{tick}")
            tick += interval
    lines += [row_line(r) for r in ordered[i:]]
    if win.time == "processing":
        lines.append(f"T\t{end}")  # the replay clock reaches the range end: the timers due before it fire
    path.write_text("\n".join(lines) + "\n")
    return splits, by_id


# -- outputs ------------------------------------------------------------------------------------------

def _aggregates(cfg: JobConfig, count: int, total: int) -> dict[str, Any]:
    out = {}
    for name, expr in cfg.aggregations.items():
        e = "".join(expr.split()).lower()
        if e in ("count(*)", "count(value)"):
            out[name] = count
        elif e == "sum(value)":
            out[name] = total
        else:
            raise ValueError(f"the Flink harness computes count(*) and sum(value) only, not {expr!r}")
    return out


def parse_output(text: str, cfg: JobConfig, splits: list[str], by_id: dict[tuple[str, int], LogRow]) -> ReplayResult:
    side = set(cfg.source.side_inputs)
    result = ReplayResult(firings=[], late_rows=[], watermarks=[])
    values: set[int] = set()
    for line in text.splitlines():
        f = line.split("\t")
        kind = f[0]
        if kind == "F":
            reason = f[6]
            rows = tuple(sorted((splits[int(s)], int(o)) for s, o in (p.split(":") for p in f[9].split(",") if p)))
            result.firings.append(Firing(
                key=json.loads(f[1]), window_start=int(f[2]), window_end=int(f[3]), fire_index=int(f[4]),
                fire_watermark=None if reason == FIRE_END_OF_INPUT else int(f[5]), fire_reason=reason,
                aggregates=_aggregates(cfg, int(f[7]), int(f[8])), rows=rows))
        elif kind == "L":
            result.late_rows.append(LateRow(by_id[(splits[int(f[1])], int(f[2]))], int(f[3])))
        elif kind == "W":
            split = None if f[3] == "-" else splits[int(f[3])]
            if split in side:
                continue  # side inputs are +inf throughout: not reported
            result.watermarks.append(WatermarkChange(int(f[1]), f[2], split, None if f[4] == "null" else int(f[4]),
                                                     f[5] == "1"))
        elif kind == "B":
            result.wm_before[(splits[int(f[1])], int(f[2]))] = int(f[3])
        elif kind == "V":
            values.add(int(f[2]))
        elif kind == "X":
            pass  # the multiplexer's idle/active signals downstream: kept in the raw output for inspection only
        else:
            raise FlinkHarnessError(f"unknown output line {line!r}")
    result.stream_values = sorted(values)
    return result


def run_flink(cases: Iterable[Case], *, concurrency: int = 2, keep_dir: str | os.PathLike | None = None,
              java_opts: Sequence[str] = ("-Xmx1g", "-XX:+UseSerialGC"), timeout_s: float = 900) -> list[ReplayResult]:
    """Runs every case through Flink in one JVM; results in the order of `cases`.
    `keep_dir` keeps the case files and raw outputs (for inspection) instead of a temporary directory."""
    cases = list(cases)
    classpath = ensure_built()
    tmp = tempfile.TemporaryDirectory(prefix="flink-cases-") if keep_dir is None else None
    work = Path(tmp.name if tmp else keep_dir)
    try:
        case_dir, out_dir = work / "cases", work / "out"
        case_dir.mkdir(parents=True, exist_ok=True)
        out_dir.mkdir(parents=True, exist_ok=True)
        meta = []
        for n, (rows, cfg, declared) in enumerate(cases):
            meta.append(write_case(case_dir / f"c{n:05d}.case", rows, cfg, declared))
        proc = subprocess.run(
            ["java", *java_opts, "-cp", classpath, "replayharness.HarnessMain", str(case_dir), str(out_dir),
             str(concurrency)], capture_output=True, text=True, timeout=timeout_s)
        results = []
        for n, (_, cfg, _) in enumerate(cases):
            out, err = out_dir / f"c{n:05d}.out", out_dir / f"c{n:05d}.err"
            if not out.exists():
                detail = err.read_text() if err.exists() else proc.stderr[-4000:]
                raise FlinkHarnessError(f"case {n}: no output from the Flink harness (exit {proc.returncode}):\n{detail}")
            results.append(parse_output(out.read_text(), cfg, *meta[n]))
        return results
    finally:
        if tmp:
            tmp.cleanup()
