"""bench/crosscheck.py: firings matched by key, window and fire order, every aggregate column, doubles exactly."""
from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import crosscheck  # noqa: E402

AGGS = ["cnt", "total", "min_value", "max_value"]
# (key, start, end, fire_index, cnt, total, min, max): window k1 [0, 10) fires twice (a late firing after the first).
FIRINGS = [("k1", 0, 10_000, 0, 2, 0.1 + 0.2, 0.1, 0.2), ("k1", 0, 10_000, 1, 3, 0.1 + 0.2 + 0.3, 0.1, 0.3),
           ("k2", 10_000, 20_000, 0, 1, 5.25, 5.25, 5.25)]


def _replay(path: Path, firings, late: int = 1) -> Path:
    cols = list(zip(*firings))
    ts = pa.timestamp("ms", tz="UTC")
    (path / "windows").mkdir(parents=True)
    pq.write_table(pa.table({"key": pa.array(cols[0]), "window_start": pa.array(cols[1], pa.int64()).cast(ts),
                             "window_end": pa.array(cols[2], pa.int64()).cast(ts),
                             "fire_index": pa.array(cols[3], pa.int32()), "cnt": pa.array(cols[4], pa.int64()),
                             **{c: pa.array(cols[5 + i], pa.float64()) for i, c in enumerate(AGGS[1:])}}),
                   path / "windows" / "part-0.parquet")
    (path / "late_events").mkdir()
    pq.write_table(pa.table({"split": ["p0"] * late, "offset": list(range(late))}), path / "late_events" / "p.parquet")
    return path


def _flink(path: Path, firings, late: int = 1) -> Path:
    """Firings as BenchMain writes them: Double.toString text, one key's firings in firing order in one file."""
    path.mkdir(parents=True)
    (path / "firings.columns").write_text("\t".join(["key", "window_start", "window_end", "wm", *AGGS]) + "\n")
    lines = [f"{k}\t{s}\t{e}\t{e - 1}\t{n}\t{t!r}\t{lo!r}\t{hi!r}" for k, s, e, _, n, t, lo, hi in firings]
    (path / "firings-0.tsv").write_text("".join(x + "\n" for x in lines))
    (path / "late-0.tsv").write_text("".join(f"0\t{i}\tk1\n" for i in range(late)))
    return path


def _check(tmp_path: Path, flink_firings, late_flink: int = 1) -> int:
    """crosscheck's exit code for the replay's FIRINGS (1 late row) against these Flink firings."""
    return crosscheck.main(["--replay", str(_replay(tmp_path / "r", FIRINGS)),
                            "--flink", str(_flink(tmp_path / "f", flink_firings, late_flink))])


def test_equal_outputs_give_no_differing_firing(tmp_path, capsys):
    rc = _check(tmp_path, FIRINGS)
    out = capsys.readouterr().out
    assert rc == 0
    assert "firings that differ" in out and ": 0 (replay only 0, Flink only 0, aggregates differ 0)" in out
    assert "largest difference: total 0.0, min_value 0.0, max_value 0.0" in out


def test_a_double_sum_in_another_order_differs(tmp_path, capsys):
    other = [FIRINGS[0], FIRINGS[1][:5] + (0.3 + 0.2 + 0.1,) + FIRINGS[1][6:], FIRINGS[2]]
    assert other[1][5] != FIRINGS[1][5]  # 0.6000000000000001 against 0.6
    rc = _check(tmp_path, other)
    out = capsys.readouterr().out
    assert rc == 1
    assert "aggregates differ 1)" in out and "total 1.1102230246251565e-16" in out


def test_firings_are_matched_by_fire_order(tmp_path, capsys):
    swapped = [FIRINGS[1], FIRINGS[0], FIRINGS[2]]  # Flink's first firing of k1's window is the replay's second
    rc = _check(tmp_path, swapped)
    assert rc == 1
    assert "aggregates differ 2)" in capsys.readouterr().out


@pytest.mark.parametrize("late_flink, rc", [(1, 0), (2, 1)])
def test_late_row_counts_must_be_equal(tmp_path, capsys, late_flink, rc):
    assert _check(tmp_path, FIRINGS, late_flink) == rc
    assert f"late rows: replay 1, Flink {late_flink}" in capsys.readouterr().out
