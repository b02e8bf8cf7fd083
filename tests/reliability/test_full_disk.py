"""A full disk or quota (issue 32, item 3): the run fails with one clear line (exit 1), the previous outputs are
untouched (decoded content), the staging folder is removed, the lock is released, and a rerun once there is space
writes what a run that never met the full disk writes.

Two ways to fill the disk:
- a failpoint (`REPLAY_FAILPOINT=<point>:enospc`, io/failpoints.py) that fails a point of the run as a write on a
  full disk does: in the middle of the staging writes (the windows staged, the other datasets being written beside
  them) and at the commit journal's write (everything staged, the commit point not reached);
- a real one: the output on a 5 MB tmpfs filled up but for a few KB, so that whichever write comes first fails
  with ENOSPC (Spark's writers in their tasks, the state files, the journal). Mounting needs root and a kernel that
  lets this sandbox mount; elsewhere that case is skipped, saying why.
`make test` runs the failpoint in the middle of the staging writes and the CLI's one line; `-m slow` the journal's
failpoint and the tmpfs.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chaos import fill, mount_tmpfs, unmount
from decoded import digests
from event_replay.io.commit import NoSpaceError
from event_replay.history.progress import save_progress
from event_replay.io.fs import fs_for
from event_replay.io.lock import LOCK, output_lock
from event_replay.pipeline import PartitionSpan
from event_replay.range_replay import run_range
from event_replay.semantics.config import parse_config
from event_replay.orchestration.failures import is_progress

pytestmark = pytest.mark.spark
DAYS = ["2024-01-01", "2024-01-02"]
REPLAY = str(Path(sys.executable).parent / "replay")


def _cfg_dict(source: Path, out: Path, size: str = "10s") -> dict:
    return {"source": {"path": str(source), "splits": ["p0", "p1", "p2"]},
            "watermark": {"emit": "periodic", "interval": "200ms", "idle_timeout": "5s",
                          "max_out_of_orderness": "500ms"},
            "window": {"type": "tumbling", "size": size, "allowed_lateness": "2s"},
            "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
            "replay": {"end_of_input": "flush"}, "output": {"path": str(out)}}


REQUEST = PartitionSpan.between(first_id=DAYS[0], last_id=DAYS[-1], first=True, previous=None, end_of_input="flush",
                       allow_missing=False)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    from event_replay.samples.days import generate_days, write_days

    src = tmp_path_factory.mktemp("full-disk") / "source"
    write_days(src, generate_days(DAYS[0], days=len(DAYS), rows_per_day=200, splits=3, seed=4, rate=20.0))
    return src


def _quiet(line: str) -> None:
    pass


def _previous_and_next(spark, source: Path, out: Path) -> tuple[object, object, dict]:
    """The outputs of one run (the previous ones) and the config of the next run, whose outputs differ."""
    run_range(spark, parse_config(_cfg_dict(source, out)), REQUEST, progress=_quiet)
    return parse_config(_cfg_dict(source, out)), parse_config(_cfg_dict(source, out, size="20s")), digests(out)


def _check_untouched(out: Path, previous: dict, message: str) -> None:
    assert "\n" not in message, message
    assert message.startswith(f"no space left on the device (or quota) of {out} while writing"), message
    assert "the previous outputs are untouched, the staging folder is removed" in message, message
    assert digests(out) == previous
    left = sorted(p.name for p in out.iterdir() if p.name.startswith("_"))
    assert left == ["_range.json", "_state"] or left == ["_state"], left  # no staging, journal or lock


@pytest.mark.parametrize("point", ["mid_staging", pytest.param("after_staging", marks=pytest.mark.slow)])
def test_a_full_disk_at_the_staging_write_leaves_the_previous_outputs(spark, source, tmp_path, monkeypatch, point):
    out = tmp_path / "out"
    _, changed, previous = _previous_and_next(spark, source, out)
    monkeypatch.setenv("REPLAY_FAILPOINT", f"{point}:enospc")
    with pytest.raises(NoSpaceError) as exc:
        run_range(spark, changed, REQUEST, progress=_quiet)
    _check_untouched(out, previous, str(exc.value))
    monkeypatch.delenv("REPLAY_FAILPOINT")
    run_range(spark, changed, REQUEST, progress=_quiet)  # space again: the run goes through
    fresh = tmp_path / "fresh"
    run_range(spark, parse_config(_cfg_dict(source, fresh, size="20s")), REQUEST, progress=_quiet)
    assert digests(out) == digests(fresh)
    assert not (out / LOCK).exists()


def test_replay_run_says_it_in_one_line(source, tmp_path):
    """Through the CLI: exit 1, one line of its own on stderr, no traceback."""
    import yaml

    out = tmp_path / "out"
    cfg = tmp_path / "job.yaml"
    cfg.write_text(yaml.safe_dump(_cfg_dict(source, out)))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "REPLAY_FAILPOINT": "mid_staging:enospc"}
    proc = subprocess.run([REPLAY, "run", "--config", str(cfg), "--master", "local[1]", "--partitions",
                           f"{DAYS[0]}..{DAYS[-1]}", "--first", "--conf", "spark.ui.enabled=false"],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    # Its one line, after the line saying where the history starts (pipeline.py's progress).
    ours = [line for line in proc.stderr.splitlines() if line.startswith("replay:") and not is_progress(line)]
    assert len(ours) == 1 and ours[0].startswith("replay: failed: no space left on the device"), proc.stderr[-4000:]
    assert sorted(os.listdir(out)) in ([], ["_range.json"])  # nothing committed, no staging, no lock


@pytest.mark.slow
def test_a_really_full_tmpfs(spark, source):
    where = mount_tmpfs("5m")
    if where is None:
        pytest.skip("cannot mount a tmpfs here (needs root and a kernel that allows it): the failpoint cases cover "
                    "the same paths")
    try:
        out = where / "out"
        _, changed, previous = _previous_and_next(spark, source, out)
        for leave in (64 * 1024, 16 * 1024, 4 * 1024):  # the first failing write differs with the room left
            filler = fill(where, leave)
            with pytest.raises(NoSpaceError) as exc:
                run_range(spark, changed, REQUEST, progress=_quiet)
            _check_untouched(out, previous, str(exc.value))
            filler.unlink()
        run_range(spark, changed, REQUEST, progress=_quiet)
        fresh = where / "fresh"
        run_range(spark, parse_config(_cfg_dict(source, fresh, size="20s")), REQUEST, progress=_quiet)
        assert digests(out) == digests(fresh)
    finally:
        unmount(where)


def test_a_disk_full_before_the_lock_is_taken_is_one_line():
    # The soak of 2026-11-28 09:12: the disk of own-1 filled while its job's Spark started; the job's lock could not be
    # created and the run ended with "failed: OSError: [Errno 28]" and a traceback.
    where = mount_tmpfs("1m")
    if where is None:
        pytest.skip("cannot mount a tmpfs here (needs root and a kernel that allows it)")
    try:
        (where / "out").mkdir()
        fill(where)
        with pytest.raises(NoSpaceError, match="while taking the output's lock .*nothing was written"):
            with output_lock(str(where / "out")):
                pass
        assert os.listdir(where / "out") == []  # no lock (not even a half-created one), no draft
    finally:
        unmount(where)


def test_a_disk_full_at_the_range_journal_is_one_line(source):
    # The soak of 2026-11-28 12:20: the disk of own-1 filled during its chunk; the range journal (_range.json) could
    # not be written and the run ended with "failed: OSError: [Errno 28]" and a traceback.
    where = mount_tmpfs("1m")
    if where is None:
        pytest.skip("cannot mount a tmpfs here (needs root and a kernel that allows it)")
    try:
        out = where / "out"
        out.mkdir()
        cfg = parse_config(_cfg_dict(source, out))
        fill(where)
        with pytest.raises(NoSpaceError, match="while writing the range's journal .*_range.json"):
            save_progress(fs_for(str(out)), str(out), cfg, REQUEST.to_dict(), None)
    finally:
        unmount(where)
