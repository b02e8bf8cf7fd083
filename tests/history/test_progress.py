"""history/progress.py: a range run resumes after the last partition committed by the very same request; another
request, another config, a torn file or a committed id outside the range start over."""
from __future__ import annotations

import dataclasses

from event_replay.history.progress import clear_progress, resume_point, save_progress
from event_replay.io.fs import LocalFs
from event_replay.pipeline import PartitionSpan
from event_replay.layout import RANGE_PROGRESS_FILE
from source_logs import make_cfg

IDS = ["2024-01-01", "2024-01-02", "2024-01-03"]
PLAN = PartitionSpan.between(IDS[0], IDS[-1], first=True, previous=None, end_of_input="flush", allow_missing=False)
REQUEST = PLAN.to_dict()  # the key: the range's plan as plain values


def _setup(tmp_path):
    (tmp_path / "out").mkdir()  # the range run writes its progress into its output folder
    return LocalFs(), str(tmp_path / "out"), make_cfg(tmp_path / "in", out=tmp_path / "out")


def test_a_rerun_of_the_same_request_resumes_after_its_last_commit(tmp_path):
    fs, out, cfg = _setup(tmp_path)
    assert resume_point(fs, out, cfg, REQUEST, IDS) is None  # no progress yet
    save_progress(fs, out, cfg, REQUEST, None)
    assert resume_point(fs, out, cfg, REQUEST, IDS) is None  # nothing committed
    save_progress(fs, out, cfg, REQUEST, IDS[1])
    assert resume_point(fs, out, cfg, REQUEST, IDS) == IDS[1]
    clear_progress(fs, out)
    assert resume_point(fs, out, cfg, REQUEST, IDS) is None


def test_another_request_or_config_starts_over(tmp_path, capsys):
    fs, out, cfg = _setup(tmp_path)
    save_progress(fs, out, cfg, REQUEST, IDS[1])
    other = dataclasses.replace(PLAN, end_of_input="hold").to_dict()
    assert resume_point(fs, out, cfg, other, IDS) is None
    assert "belongs to another range request" in capsys.readouterr().err
    changed = make_cfg(tmp_path / "in", out=tmp_path / "out", window={"size": "20s"})
    assert resume_point(fs, out, changed, REQUEST, IDS) is None
    assert resume_point(fs, out, cfg, REQUEST, IDS[:1]) is None  # committed id outside the range


def test_a_torn_progress_file_starts_over(tmp_path):
    fs, out, cfg = _setup(tmp_path)
    save_progress(fs, out, cfg, REQUEST, IDS[0])
    path = f"{out}/{RANGE_PROGRESS_FILE}"
    fs.write_text(path, fs.read_text(path)[:25])
    assert resume_point(fs, out, cfg, REQUEST, IDS) is None
