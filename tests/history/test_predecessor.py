"""Which partition a partition continues (history/predecessor.py): the latest one before it, of its length, with a
source folder or a saved state; a day replayed as empty counts, a gap never replayed does not. No Spark: a local
source and output are listed directly. (The DAG, the dry run and `replay run` agreeing on it, end to end:
test_history_entries.py.)"""
from __future__ import annotations

import pytest

from event_replay.history.predecessor import predecessor, saved_states
from event_replay.history.state_files import MANIFEST
from source_logs import make_cfg


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
