"""A split the live job never read (compare/split_read.py): the source's rows per split per window (CSV here,
columns renamed, only the config's splits), the split whose rows are exactly what the live output lacks, and the
hint that names it only when it explains (nearly) every window it has rows in."""
from __future__ import annotations

import pytest

from compare_frames import S, T0, cfg
from event_replay.compare.split_read import (missing_split_hint, missing_split_stats, read_source, source_evidence,
                                            with_missing_split)

pytestmark = pytest.mark.spark

WIN = "key string, window_start_ms long, window_end_ms long"
# (split, key, event time - T0, arrival - T0)
ROWS = [("p1", "k", 1_000, 1_500), ("p1", "k", 2_000, 2_500), ("p2", "k", 3_000, 3_000), ("p2", "k", 4_000, 4_100),
        ("p1", "j", 1_000, 1_000), ("p1", "m", 6_000, 6_000), ("p2", "m", 7_000, 7_000), ("p2", "m", 7_500, 7_500),
        ("p2", "m", 8_000, 8_000), ("p2", "n", 9_000, 9_000),
        ("p2", "j", 12_000, 12_000),  # the next window: not needed
        ("p3", "k", 5_000, 5_000)]    # not one of the config's splits


@pytest.fixture()
def src_cfg(tmp_path):
    lines = ["part,off,arr,ts,user"] + [f"{s},{i},{T0 + a},{T0 + t},{k}" for i, (s, k, t, a) in enumerate(ROWS)]
    lines[1] = f"p1,0,2024-01-01 00:00:01.500,{T0 + 1_000},k"  # a timestamp string is read as epoch ms too
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    return cfg().with_overrides(source={"path": str(tmp_path / "log.csv"), "format": "csv", "splits": ["p1", "p2"],
                                        "columns": {"split": "part", "offset": "off", "arrival_time": "arr",
                                                    "event_time": "ts", "key": "user"}})


def test_read_source_roles_and_splits(spark, src_cfg, tmp_path):
    got = sorted(tuple(r) for r in read_source(spark, src_cfg, ("split", "arrival")).collect())
    assert got == sorted((s, T0 + a) for s, _, _, a in ROWS if s != "p3")
    assert read_source(spark, src_cfg.with_overrides(source={"path": str(tmp_path / "gone.csv")}), ("split",)) is None
    other = src_cfg.with_overrides(source={"columns": {"split": "part", "offset": "off", "arrival_time": "arr",
                                                       "event_time": "ts", "key": "nokey"}})
    assert read_source(spark, other, ("split", "key")) is None  # a role's column is not in the log
    assert read_source(spark, other, ("split", "time")) is not None  # ...unless that role is not asked for


def test_source_rows_per_window_and_the_missing_split(spark, src_cfg):
    needing = spark.createDataFrame([(k, T0, T0 + S) for k in "kjmn"], WIN)
    src = source_evidence(spark, src_cfg, needing)
    got = {r.key: (r.source_rows, dict(r.source_rows_by_split)) for r in src.collect()}
    assert got == {"k": ("p1 2, p2 2", {"p1": 2, "p2": 2}), "j": ("p1 1", {"p1": 1}),
                   "m": ("p1 1, p2 3", {"p1": 1, "p2": 3}), "n": ("p2 1", {"p2": 1})}
    ev = spark.createDataFrame([("k", T0, T0 + S, "value_differs", 4, -2), ("j", T0, T0 + S, "replay_only", 1, None),
                                ("m", T0, T0 + S, "value_differs", 4, -1), ("n", T0, T0 + S, "replay_only", 1, None)],
                               WIN + ", class string, replay_cnt long, count_delta long")
    out = {r.key: r.missing_split for r in with_missing_split(ev, src, "cnt").collect()}
    # Candidates: k p1/p2, j p1, m p1, n p2; p1 is one in 3 windows, so only p1 is named.
    assert out == {"k": "p1", "j": "p1", "m": "p1", "n": None}
    # k and n: p2 is a candidate in both, so it is named in both.
    two = with_missing_split(ev.where("key in ('k', 'n')"), src, "cnt")
    assert {r.key: r.missing_split for r in two.collect()} == {"k": "p2", "n": "p2"}
    # One window alone: named only when a single split fits.
    for key, split in (("k", None), ("n", "p2")):
        [r] = with_missing_split(ev.where(f"key = '{key}'"), src, "cnt").collect()
        assert r.missing_split == split
    none = with_missing_split(ev, None, "cnt").collect()
    assert {(r.source_rows, r.source_rows_by_split, r.missing_split) for r in none} == {(None, None, None)}


def _hint_ev(spark, rows):
    """The hint from the stats of these windows (as hints.py gathers them)."""
    ev = spark.createDataFrame(rows, "id int, source_rows_by_split map<string,bigint>, missing_split string, "
                                     "late_live_only_n long")
    return [r.asDict() for r in missing_split_stats(ev).collect()]


def test_hint_names_a_split_explaining_every_window_it_has_rows_in(spark):
    rows = [(1, {"p1": 2, "p2": 2}, "p1", None), (2, {"p1": 1}, "p1", 0), (3, {"p1": 1, "p2": 3}, "p1", None),
            (4, {"p2": 5}, None, None), (5, {"p1": 4}, None, 2),  # read late in the live job: left out
            (6, None, None, None)]
    h = missing_split_hint(_hint_ev(spark, rows))
    assert (h["kind"], h["split"], h["windows"]) == ("split_not_read", "p1", 3)
    assert h["text"].startswith("In 3 of the 3 windows with rows of split p1 that the live output lacks rows of")
    # 2 of 3 windows is not (nearly) every one; one window is never enough.
    assert missing_split_hint(_hint_ev(spark, rows[:3] + [(7, {"p1": 1}, None, None)])) is None
    assert missing_split_hint(_hint_ev(spark, rows[1:2])) is None
