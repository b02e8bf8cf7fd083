"""OffsetRuns.java: the offset pre-check's pass over each Spark partition's rows in read order, cut into runs (one
split's candidate rows of one folder and file whose arrival times never fall and whose offsets strictly rise), past
maxRuns one unordered rest per split, one summary per (status, folder) of the other rows, and with an interval the
split's tick records (TickTimes)."""
from __future__ import annotations

import pytest
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

pytestmark = pytest.mark.spark

COLUMNS = [("status", IntegerType()), ("split", StringType()), ("folder", LongType()), ("offset", LongType()),
           ("arrival", LongType()), ("file", LongType()), ("event_time", LongType())]


def _runs(java, rows, max_runs=8, interval=0):
    """The pass's records over `rows` (status, split, folder, offset, arrival, file[, event time]) read in this
    order by one Spark partition: (c, s, f, n, lo, hi, min_o, max_o, ordered) per record, then the tick records'
    (s, n, sorted ticks with their min and max event times)."""
    schema = StructType([StructField(n, t) for n, t in COLUMNS])
    df = java.spark.createDataFrame([tuple(r) + (None,) * (7 - len(r)) for r in rows], schema).coalesce(1)
    out = java.frame(java.jvm.io.eventreplay.spark.OffsetRuns.runs(df._jdf, max_runs, interval)).collect()
    runs = [tuple(r)[:9] for r in out if r.ticks is None]
    ticks = [(r.s, r.n, sorted(zip(r.ticks, r.min_e, r.max_e))) for r in out if r.ticks is not None]
    return runs, ticks


def test_no_rows_no_records(java):
    assert _runs(java, []) == ([], [])
    assert _runs(java, [], interval=10) == ([], [])


def test_a_split_read_in_order_is_one_run(java):
    rows = [(0, "a", 1, 1, 10, 5), (0, "a", 1, 2, 10, 5), (0, "a", 1, 3, 11, 5)]  # equal arrivals allowed
    assert _runs(java, rows)[0] == [(0, "a", 1, 3, 10, 11, 1, 3, True)]


def test_a_run_ends_where_arrival_falls_the_offset_does_not_rise_or_the_file_changes(java):
    rows = [(0, "a", 1, 1, 10, 5), (0, "a", 1, 2, 12, 5),
            (0, "a", 1, 3, 11, 5),  # arrival falls
            (0, "a", 1, 3, 13, 5),  # offset repeats
            (0, "a", 1, 4, 14, 6), (0, "a", 1, 5, 15, 6)]  # another file
    assert _runs(java, rows)[0] == [
        (0, "a", 1, 2, 10, 12, 1, 2, True),
        (0, "a", 1, 1, 11, 11, 3, 3, True),
        (0, "a", 1, 1, 13, 13, 3, 3, True),
        (0, "a", 1, 2, 14, 15, 4, 5, True),
    ]


def test_splits_and_folders_are_cut_apart(java):
    rows = [(0, "a", 1, 5, 10, 1), (0, "b", 1, 1, 50, 1), (0, "a", 1, 6, 11, 1), (0, "a", 2, 1, 5, 1),
            (0, "b", 1, 2, 51, 1), (0, "a", 1, 7, 12, 1)]
    assert sorted(_runs(java, rows)[0]) == [
        (0, "a", 1, 3, 10, 12, 5, 7, True), (0, "a", 2, 1, 5, 5, 1, 1, True), (0, "b", 1, 2, 50, 51, 1, 2, True)]


def test_past_max_runs_the_rest_of_the_split_is_one_unordered_record(java):
    rows = [(0, "a", 1, 1, 10, 1), (0, "a", 1, 0, 10, 1),  # 2nd run
            (0, "a", 1, 5, 5, 1),  # would be a 3rd run: the rest is summed
            (0, "a", 1, 6, 20, 1), (0, "b", 1, 1, 1, 1)]
    assert _runs(java, rows, max_runs=1)[0] == [
        (0, "a", 1, 1, 10, 10, 1, 1, True),
        (0, "a", 1, 3, 5, 20, 0, 6, False),
        (0, "b", 1, 1, 1, 1, 1, 1, True),
    ]
    assert len(_runs(java, rows, max_runs=2)[0]) == 4  # within the limit every run is a record


def test_other_statuses_are_counted_per_status_and_folder_whatever_their_split(java):
    rows = [(2, "a", 1, None, None, 1), (2, "b", 1, 7, 30, 1), (2, "a", 1, 3, 20, 1), (3, None, 1, None, None, 1),
            (2, "a", 4, None, None, 1), (0, "a", 1, 1, 1, 1)]
    assert sorted(_runs(java, rows)[0], key=repr) == sorted([
        (2, None, 1, 3, 20, 30, 3, 7, False),
        (3, None, 1, 1, None, None, None, None, False),  # no row had an offset or arrival: null, not a sentinel
        (2, None, 4, 1, None, None, None, None, False),
        (0, "a", 1, 1, 1, 1, 1, 1, True),
    ], key=repr)


def test_with_an_interval_each_split_gets_its_ticks_from_its_candidate_rows_only(java):
    rows = [(0, "a", 1, 1, 1, 1, 5), (0, "a", 1, 2, 10, 1, 3), (0, "b", 1, 1, 10, 1, 100), (0, "a", 1, 3, 11, 1, 9),
            (2, "a", 1, 9, 11, 1, 1000)]
    runs, ticks = _runs(java, rows, interval=10)
    assert len(runs) == 3
    assert sorted(ticks) == [("a", 3, [(10, 3, 5), (20, 9, 9)]), ("b", 1, [(10, 100, 100)])]
    assert _runs(java, rows, interval=0)[1] == []


@pytest.mark.parametrize("max_runs, interval, message", [
    (0, 0, "maxRuns must be at least 1, got 0"),
    (1, -1, "interval must be 0 \\(none\\) or positive, got -1"),
])
def test_bad_arguments_are_refused(java, max_runs, interval, message):
    df = java.spark.createDataFrame([], StructType([StructField(n, t) for n, t in COLUMNS]))
    with pytest.raises(Exception, match=message):
        java.jvm.io.eventreplay.spark.OffsetRuns.runs(df._jdf, max_runs, interval)
