"""Partitions of a history (history/partitions.py): a UTC day or hour parsed from its id, refused naming
`--partition` when it is no date, its folder, the partition before it (across months, years and midnight), and the
clock of a whole source, the ids of a range `FROM..TO`, and which partition one continues: the latest one before it,
of its length, with a source folder or a saved state (a day replayed as empty counts, a gap never replayed does not;
no Spark: a local source and output are listed directly). (tests/test_partitions.py is the partition-by-partition
replay; the DAG, the dry run and `replay run` agreeing on the predecessor, end to end: test_history_entries.py.)"""
from __future__ import annotations

import datetime as dt

import pytest

from event_replay.history.partitions import Clock, Partition, parse_range, partition_ids, predecessor, saved_states
from event_replay.history.state_files import MANIFEST
from event_replay.io.source import SourceData
from event_replay.semantics.config_keys import ConfigError
from source_logs import make_cfg


def ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)


def test_a_day_and_an_hour_cover_their_utc_range():
    day = Partition.parse("2024-02-29")
    assert (day.start_ms, day.end_ms, day.hourly) == (ms("2024-02-29"), ms("2024-03-01"), False)
    hour = Partition.parse(" 2024-03-31T23 ")
    assert hour.id == "2024-03-31T23" and hour.hourly
    assert (hour.start_ms, hour.end_ms) == (ms("2024-03-31T23:00"), ms("2024-04-01T00:00"))


def test_its_folder_under_the_source():
    assert Partition.parse("2024-01-02").subpath == "dt=2024-01-02"
    assert Partition.parse("2024-01-02T05").subpath == "dt=2024-01-02/hour=05"


@pytest.mark.parametrize("text", ["2024-1-2", "2024-01-02T5", "2024-01-02 05", "yesterday", "", "2024-02-30",
                                  "2024-13-01", "2024-01-02T24"])
def test_an_id_that_is_no_day_or_hour_is_refused_naming_the_option(text):
    with pytest.raises(ConfigError) as e:
        Partition.parse(text)
    assert e.value.key == "--partition" and repr(text) in e.value.why


@pytest.mark.parametrize("text, before", [
    ("2024-03-01", "2024-02-29"), ("2024-01-01", "2023-12-31"), ("2024-01-02", "2024-01-01"),
    ("2024-01-01T00", "2023-12-31T23"), ("2024-03-01T10", "2024-03-01T09"),
])
def test_the_partition_before(text, before):
    p = Partition.parse(text)
    assert p.previous() == Partition.parse(before)
    assert p.previous().end_ms == p.start_ms


def _source(start_ms, end_ms) -> SourceData:
    # Only where the rows start and end matter to the clock (no Spark frame is read).
    return SourceData(rows=None, quarantine=None, rows_read=0, clean_rows=0, quarantined_rows=0, skipped_rows=0,
                      splits=[], start_ms=start_ms, end_ms=end_ms, source_columns={}, payload_columns=[])


def test_a_whole_source_clock_runs_from_its_first_row_to_the_end_of_input():
    assert Clock.of_source(_source(5, 20)) == Clock(5, 20, None)
    assert Clock.of_source(_source(None, None)) == Clock(0, 0)  # no row, no explicit range
    assert Clock.of_source(_source(7, None)) == Clock(7, 7)


def test_partition_ids_of_days_and_hours():
    assert partition_ids(*parse_range("2024-02-27..2024-03-02")) == \
        ["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01", "2024-03-02"]
    assert partition_ids(*parse_range("2024-01-01T22..2024-01-02T01")) == \
        ["2024-01-01T22", "2024-01-01T23", "2024-01-02T00", "2024-01-02T01"]
    assert partition_ids(*parse_range("2024-01-05..2024-01-05")) == ["2024-01-05"]
    assert len(partition_ids(*parse_range("2023-01-01..2023-12-31"))) == 365


@pytest.mark.parametrize("text,why", [("2024-01-01", "FROM..TO"), ("2024-01-03..2024-01-01", "before"),
                                      ("2024-01-01..2024-01-02T03", "both"),
                                      ("2024-13-01..2024-12-31", "expected|month")])
def test_bad_ranges_are_refused(text, why):
    with pytest.raises(ConfigError, match=why):
        parse_range(text)


@pytest.fixture
def history(tmp_path):
    """Source folders for 01-01, 01-02, 01-05 and the hours 01-02T03, T05; states for 01-01, 01-03 (replayed as
    empty: no folder) and the hour 01-02T04; a stray file and folder beside the states."""
    src, out = tmp_path / "log", tmp_path / "out"
    for folder in ("dt=2024-01-01", "dt=2024-01-02/hour=03", "dt=2024-01-02/hour=05", "dt=2024-01-05",
                   "dt=2024-02-30", "_tmp"):
        (src / folder).mkdir(parents=True)
    for state in ("2024-01-01", "2024-01-03", "2024-01-02T04", "_staging"):
        (out / "_state" / state).mkdir(parents=True)
        (out / "_state" / state / MANIFEST).write_text("{}")
    (out / "_state" / "notes.txt").write_text("x")
    return make_cfg(src, out=out)


def test_the_latest_partition_before_with_a_folder_or_a_state(history):
    assert predecessor(None, history, "2024-01-02") == "2024-01-01"
    assert predecessor(None, history, "2024-01-04") == "2024-01-03"  # replayed as empty: a state, no folder
    assert predecessor(None, history, "2024-01-05") == "2024-01-03"
    assert predecessor(None, history, "2024-01-07") == "2024-01-05"  # 01-06 is a gap: never replayed, no folder
    assert predecessor(None, history, "2024-01-01") is None


def test_hours_continue_hours(history):
    assert predecessor(None, history, "2024-01-02T05") == "2024-01-02T04"  # a state
    assert predecessor(None, history, "2024-01-02T04") == "2024-01-02T03"  # a folder
    assert predecessor(None, history, "2024-01-02T03") is None  # the day states are not hours
    assert saved_states(None, history, hourly=True) == ["2024-01-02T04"]
    assert saved_states(None, history, hourly=False) == ["2024-01-01", "2024-01-03"]


def test_an_output_without_states_and_a_source_without_folders(tmp_path):
    cfg = make_cfg(tmp_path / "log", out=tmp_path / "out")
    assert predecessor(None, cfg, "2024-01-02") is None and saved_states(None, cfg, hourly=False) == []
