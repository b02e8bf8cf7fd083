"""A range run's progress, `<output.path>/_range.json` (range_replay.py): the request (the range's plan as plain
values, pipeline.PartitionSpan.to_dict) and the last partition it committed, so that a rerun of the same request
commits only the partitions after it. A torn or foreign file only means starting the range over, which is always
correct."""
from __future__ import annotations

import json
import sys
from typing import Any, Mapping

from ..io.commit import NoSpaceError, no_space
from ..io.fs import Fs
from ..layout import RANGE_PROGRESS_FILE
from ..semantics.config import JobConfig
from .state import fingerprint


def _progress_key(cfg: JobConfig, request: Mapping[str, Any]) -> dict:
    return {**request, "fingerprint": fingerprint(cfg), "source": cfg.source.path}


def resume_point(fs: Fs, output: str, cfg: JobConfig, request: Mapping[str, Any], ids: list[str],
                 warn: bool = True) -> str | None:
    """The last partition an interrupted run of this very request committed (None: start at the beginning): the one
    reader of the progress, for the run, its dry run and the DAG's planner. `warn`: say so when the progress is
    another request's (the planner asks once per job of the run, and only one of them can be that request)."""
    text = fs.read_text(f"{output}/{RANGE_PROGRESS_FILE}")
    if text is None:
        return None
    try:
        saved = json.loads(text)
        same = saved["request"] == _progress_key(cfg, request)
        committed = saved["committed"]
    except (ValueError, KeyError, TypeError):
        same, committed = False, None  # torn or foreign: starting over is always correct
    if same and committed is None:
        return None  # the interrupted run committed nothing
    if not same or committed not in ids:
        if warn:
            print(f"replay: {output}/{RANGE_PROGRESS_FILE} belongs to another range request: replaying "
                  f"{ids[0]}..{ids[-1]} from its start", file=sys.stderr, flush=True)
        return None
    return committed


def save_progress(fs: Fs, output: str, cfg: JobConfig, request: Mapping[str, Any], committed: str | None) -> None:
    """Written after the partition's commit: a crash in between only replays that partition once more, which
    gives the same outputs (its predecessor's state has not changed). A full disk here is the full-disk line."""
    path = f"{output}/{RANGE_PROGRESS_FILE}"
    try:
        fs.write_text(path, json.dumps({"request": _progress_key(cfg, request), "committed": committed},
                                       indent=1) + "\n")
    except Exception as exc:
        # Seen in the soak of 2026-11-28 12:20 (the output's disk filled during a chunk): an OSError and a traceback.
        if no_space(exc):
            raise NoSpaceError(f"no space left on the device (or quota) of {output} while writing the range's "
                               f"journal {path}: the partitions committed before are kept; free space and run "
                               "again") from None
        raise


def clear_progress(fs: Fs, output: str) -> None:
    """A finished range: running it again replays it again."""
    fs.delete(f"{output}/{RANGE_PROGRESS_FILE}")
