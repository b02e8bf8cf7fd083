"""bench/crosscheck.py: firings matched by key, window and fire order, every aggregate column, doubles exactly."""
from __future__ import annotations

import io
import sys
from contextlib import redirect_stdout
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


def test_a_missing_late_row_differs(tmp_path, capsys):
    assert _check(tmp_path, FIRINGS, late_flink=0) == 1
    assert "late rows: replay 1, Flink 0" in capsys.readouterr().out


# Bucketed: many keys, windows firing up to three times, the replay in three files in no particular row order, the
# Flink firings spread over two files by key, in firing order (window end, then key) within each.
MANY = [(f"k{k:02d}", s * 10_000, s * 10_000 + 10_000, i, 1 + i + k % 3, 0.1 * (k + 1) + 0.2 * i + s, 0.1 * k,
         0.1 * k + i) for k in range(23) for s in range(4) for i in range(1 + (k + s) % 3)]


def _replay_files(path: Path, firings, late: int = 3, files: int = 3) -> Path:
    """The replay's outputs in several Parquet files (rows shuffled: only fire_index orders a window's firings)."""
    shuffled = sorted(firings, key=lambda f: ((int(f[0][1:]) + f[1] // 10_000 + 3 * f[3]) % 7, f))
    _replay(path, shuffled[: len(shuffled) // files], late)
    for i in range(1, files):
        part = shuffled[i * len(shuffled) // files: (i + 1) * len(shuffled) // files]
        _replay(path / f"x{i}", part, 0)
        (path / f"x{i}" / "windows" / "part-0.parquet").rename(path / "windows" / f"part-{i}.parquet")
    return path


def _flink_files(path: Path, firings, late: int = 3) -> Path:
    path.mkdir(parents=True)
    (path / "firings.columns").write_text("\t".join(["key", "window_start", "window_end", "wm", *AGGS]) + "\n")
    for sub in (0, 1):
        # stable: a window's firings stay in the order given
        mine = sorted((f for f in firings if int(f[0][1:]) % 2 == sub), key=lambda f: (f[2], f[0]))
        (path / f"firings-{sub}.tsv").write_text(
            "".join(f"{k}\t{s}\t{e}\t{e - 1}\t{n}\t{t!r}\t{lo!r}\t{hi!r}\n" for k, s, e, _, n, t, lo, hi in mine))
        rows = late // 2 if sub == 0 else late - late // 2
        (path / f"late-{sub}.tsv").write_text("".join(f"{sub}\t{i}\tk01\n" for i in range(rows)))
    return path


def _run(tmp_path: Path, flink_firings, buckets: int, naive: Path | None = None) -> tuple[int, str]:
    r, f = tmp_path / "r", tmp_path / f"f-{buckets}"
    if not r.exists():
        _replay_files(r, MANY)
    _flink_files(f, flink_firings)
    spill = tmp_path / f"spill-{buckets}"
    spill.mkdir()
    out = io.StringIO()
    with redirect_stdout(out):
        rc = crosscheck.main(["--replay", str(r), "--flink", str(f), "--buckets", str(buckets), "--tmp-dir", str(spill),
                              *(["--naive", str(naive)] if naive else [])])
    assert not any(spill.iterdir()), "the spilled buckets are removed"
    return rc, out.getvalue()


def _changed(i: int, **values):
    """MANY with firing i's columns replaced."""
    names = ["key", "window_start", "window_end", "fire_index", "cnt", *AGGS[1:]]
    return [tuple(values.get(n, v) for n, v in zip(names, f)) if j == i else f for j, f in enumerate(MANY)]


def _several_windows_differ():
    wrong = _changed(5, total=MANY[5][5] + 2 ** -40)
    wrong = [f if j != 40 else f[:4] + (f[4] + 1,) + f[5:] for j, f in enumerate(wrong)]
    drop = next(j for j in range(60, len(MANY)) if j + 1 == len(MANY) or MANY[j + 1][:3] != MANY[j][:3])
    return [f for j, f in enumerate(wrong) if j != drop]  # and a window's last firing Flink lacks


@pytest.mark.parametrize("flink, rc, says", [
    (MANY, 0, ": 0 (replay only 0, Flink only 0, aggregates differ 0)"),
    (_changed(7, total=MANY[7][5] + 1e-12), 1, "aggregates differ 1)"),
    (_several_windows_differ(), 1, ": 3 (replay only 1, Flink only 0, aggregates differ 2)")])
def test_the_result_does_not_depend_on_the_bucket_count(tmp_path, flink, rc, says):
    runs = {n: _run(tmp_path, flink, n) for n in (1, 3, 64)}
    assert {run for run in runs.values()} == {runs[1]}
    assert runs[1][0] == rc and says in runs[1][1]
    assert f"replay firings: {len(MANY)}; Flink firings: {len(flink)};" in runs[1][1]


def test_swapped_fire_order_in_one_flink_file_differs(tmp_path):
    two = [j for j, f in enumerate(MANY) if f[3] == 1]
    swapped = list(MANY)
    swapped[two[0] - 1], swapped[two[0]] = MANY[two[0]], MANY[two[0] - 1]  # the window's firings 0 and 1
    assert swapped[two[0]][3] == 0 and swapped[two[0]][:3] == MANY[two[0]][:3]
    rc, out = _run(tmp_path, swapped, 4)
    assert rc == 1 and "aggregates differ 2)" in out


def test_a_truncated_flink_file_is_named_and_its_whole_lines_compared(tmp_path):
    f = _flink_files(tmp_path / "f", MANY)
    text = (f / "firings-1.tsv").read_text()
    (f / "firings-1.tsv").write_text(text[: text.rindex("\n", 0, len(text) - 1) + 12])  # last line cut after 11 chars
    rc, out = _run_on(tmp_path, f)
    assert rc == 1
    assert "Flink output truncated (a file ends mid-line; its whole lines compared): firings-1.tsv (11 bytes" in out
    assert ": 1 (replay only 1, Flink only 0, aggregates differ 0)" in out


def _run_on(tmp_path: Path, flink: Path) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        rc = crosscheck.main(["--replay", str(_replay_files(tmp_path / "r", MANY)), "--flink", str(flink),
                              "--buckets", "3"])
    return rc, out.getvalue()


def test_naive_windows_against_the_replays_last_firing(tmp_path):
    last = {f[:3]: f for f in sorted(MANY, key=lambda f: f[3])}
    rows = [(k, s, e, n + (k == "k03"), t) for (k, s, e), (*_, n, t, _lo, _hi) in last.items()]  # k03's 4 windows
    rows.append(("k99", 0, 10_000, 1, 1.0))  # a window the replay does not have
    naive = tmp_path / "naive"
    naive.mkdir()
    cols = list(zip(*rows))
    us = pa.timestamp("us", tz="UTC")  # as Spark writes them; the replay's fixture has milliseconds
    pq.write_table(pa.table({"key": cols[0], "window_start": pa.array([x * 1000 for x in cols[1]]).cast(us),
                             "window_end": pa.array([x * 1000 for x in cols[2]]).cast(us),
                             "cnt": pa.array(cols[3], pa.int64()), "total": pa.array(cols[4], pa.float64())}),
                   naive / "part-0.parquet")
    one, several = _run(tmp_path, MANY, 1, naive), _run(tmp_path, MANY, 7, naive)
    assert one == several and one[0] == 0
    assert (f"naive windows: {len(rows)}; replay windows (last firing): {len(last)}; windows whose naive count/sum "
            f"differ from the replay's final firing or exist in one only: 5") in one[1]


def test_the_first_differing_firings_name_their_keys_in_key_order(tmp_path):
    rc, out = _run(tmp_path, _several_windows_differ(), 5)
    table = out.split("First differing firings (_r replay, _f Flink):")[1]
    assert rc == 1 and MANY[5][0] < MANY[40][0]
    assert 0 < table.index(f" {MANY[5][0]} ") < table.index(f" {MANY[40][0]} ")
