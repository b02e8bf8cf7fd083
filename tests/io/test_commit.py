"""The commit journal (io/commit.py), without Spark: a crash at any point of a commit rolls forward."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from event_replay.io.commit import JOURNAL, commit, recover, remove_orphan_staging
from event_replay.io.fs import LocalFs


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _stage(out: Path, version: str) -> tuple[str, list[tuple[str, str]]]:
    staging = out / f"_staging-{version}"
    moves = []
    for ds in ("windows", "counts", "_state/2024-01-02"):
        d = staging / ds
        d.mkdir(parents=True)
        (d / "part-0").write_text(f"{ds} {version}")
        dst = out / (f"{ds}/dt=2024-01-02" if not ds.startswith("_") else ds)
        moves.append((str(d), str(dst)))
    return str(staging), moves


def test_commit_journal_rolls_forward_from_any_point(tmp_path):
    fs = LocalFs()
    out = tmp_path / "out"
    out.mkdir()
    staging, moves = _stage(out, "old")
    commit(fs, str(out), staging, moves)
    old = _tree(out)
    assert sorted(old) == ["_state/2024-01-02/part-0", "counts/dt=2024-01-02/part-0", "windows/dt=2024-01-02/part-0"]
    staging, moves = _stage(out, "new")
    commit(fs, str(out), staging, moves)
    new = _tree(out)
    assert set(new.values()) == {"windows new", "counts new", "_state/2024-01-02 new"}

    # Interrupted after k renames (0..3) with the journal written: recover() gives the new outputs whole,
    # and running it again changes nothing.
    for k in range(len(moves) + 1):
        shutil.rmtree(out)
        out.mkdir()
        staging, moves = _stage(out, "old")
        commit(fs, str(out), staging, moves)
        staging, moves = _stage(out, "new")
        (out / JOURNAL).write_text(json.dumps({"format": 1, "staging": staging, "moves": [list(m) for m in moves]}))
        for src, dst in moves[:k]:
            shutil.rmtree(dst)
            os.rename(src, dst)
        if k == 1:  # a crash between deleting the previous folder and renaming the staged one
            shutil.rmtree(moves[1][1])
        assert recover(str(out), fs=fs) is not None
        assert _tree(out) == new
        assert recover(str(out), fs=fs) is None and _tree(out) == new

    # Died before the commit point: the staged folder is an orphan, the outputs are the previous ones.
    staging, moves = _stage(out, "newer")
    assert recover(str(out), fs=fs) is None
    assert remove_orphan_staging(str(out), fs=fs) == [Path(staging).name]
    assert _tree(out) == new

