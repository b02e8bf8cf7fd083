"""All-or-nothing commit of a run's outputs (and, for a partition run, its carried state) with a journal.

A run writes everything to `<output>/_staging-<token>/` first. Then:
  1. the list of moves (staged folder -> final folder) is written to a temporary file and renamed to
     `<output>/_commit.json`: that rename is the commit point (one atomic rename, on a local file system
     and on HDFS);
  2. each move is applied: the previous folder at the target is deleted, the staged one renamed into place;
  3. the staging folder and then the journal are deleted.
A crash before 1 leaves the previous outputs untouched (the orphan staging folder is deleted by the next run);
a crash after 1 leaves a journal, and whoever comes next (the next run, under the output lock, or a reader)
rolls it forward with `recover`: every step is idempotent (a move whose staged folder is gone is done), so the
outputs become the new run's complete outputs. The final layout is the one readers always used (windows/,
late_events/, ..., `dt=` sub-folders for partition runs, `_state/<partition>/`); only `_commit.json` and
`_staging-*` are new, and both start with `_`, which Spark's readers skip.
"""
from __future__ import annotations

import errno
import json
import posixpath
import uuid
from typing import Callable, TypeVar

from ..exits import Failure
from .failpoints import failpoint
from .fs import Fs, fs_for

R = TypeVar("R")

JOURNAL = "_commit.json"
STAGING_PREFIX = "_staging-"
FORMAT = 1


class CommitError(OSError):
    pass


class NoSpaceError(Failure):
    """A write of the run failed for lack of space (ENOSPC, a quota): said in one line, with what was left."""


def no_space(exc: BaseException) -> bool:
    """Whether a failure is a full disk or quota: ENOSPC/EDQUOT anywhere in its chain, or Java's message for it
    (a Spark write fails in a task: the driver sees the executor's IOException as text)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(m in str(exc) for m in ("No space left on device", "Disk quota exceeded")):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def discard_staging(fs: Fs, output: str, staging: str, exc: BaseException) -> BaseException:
    """After a failure before the commit point: remove the staging folder; returns the exception to raise (a full
    disk as one clear NoSpaceError, anything else as it was)."""
    try:
        if fs.exists(staging):
            fs.delete(staging)
        removed = "the staging folder is removed"
    except Exception:  # noqa: BLE001 - the next run under the lock removes it (remove_orphan_staging)
        removed = f"the staging folder {staging} is left for the next run to remove"
    if isinstance(exc, Exception) and no_space(exc):
        return NoSpaceError(f"no space left on the device (or quota) of {output} while writing the run's outputs: "
                            f"nothing of this run was committed, the previous outputs are untouched, {removed} and "
                            f"the output's lock released; free space and run again")
    return exc


def new_staging(output: str) -> str:
    return f"{output.rstrip('/')}/{STAGING_PREFIX}{uuid.uuid4().hex[:12]}"


def stage_and_commit(fs: Fs, output: str, stage: Callable[[str], tuple[R, list[tuple[str, str]]]]) -> R:
    """`stage(staging) -> (result, moves)` writes into a new staging folder of `output`; its moves are then committed,
    all or nothing. A failure while staging removes the staging folder and commits nothing. Returns the result."""
    output = output.rstrip("/")
    fs.mkdirs(output)
    staging = new_staging(output)
    try:
        result, moves = stage(staging)
    except BaseException as exc:
        raise discard_staging(fs, output, staging, exc) from exc
    commit(fs, output, staging, moves)
    return result


def _journal(output: str) -> str:
    return f"{output.rstrip('/')}/{JOURNAL}"


def commit(fs: Fs, output: str, staging: str, moves: list[tuple[str, str]], keep_staging: bool = False) -> None:
    """Make the staged folders the outputs, all or nothing (see the module doc). `moves` are applied in order.
    `keep_staging`: the staging folder holds more to commit after these moves (a range, partition by partition);
    a recovery of this commit still deletes it: what was not committed yet is replayed again."""
    output = output.rstrip("/")
    if fs.exists(_journal(output)):
        raise CommitError(f"{_journal(output)} exists: an interrupted commit must be rolled forward first "
                          "(io.commit.recover)")
    tmp = f"{output}/_commit.json.tmp-{uuid.uuid4().hex[:8]}"
    try:
        failpoint("after_staging")
        fs.write_text(tmp, json.dumps({"format": FORMAT, "staging": staging, "moves": [list(m) for m in moves]},
                                      indent=1) + "\n")
        if not fs.rename(tmp, _journal(output)):
            raise CommitError(f"cannot write the commit journal {_journal(output)}")
    except Exception as exc:  # before the commit point: nothing committed; what was staged goes
        try:
            fs.delete(tmp)
        except Exception:  # noqa: BLE001 - a leftover temporary journal is removed by the next run
            pass
        raise discard_staging(fs, output, staging, exc) from exc
    failpoint("after_journal")
    _apply(fs, output, staging, moves, keep_staging)


def _apply(fs: Fs, output: str, staging: str, moves: list[tuple[str, str]], keep_staging: bool = False) -> None:
    for i, (src, dst) in enumerate(moves):
        if "/_state/" in dst:
            failpoint("before_state")
        if fs.exists(src):  # not yet moved (a rename either happened whole or not at all)
            if fs.exists(dst):
                fs.delete(dst)  # the previous output at this place; a rename onto a folder would nest into it
            parent = posixpath.dirname(dst.rstrip("/"))
            if parent:
                fs.mkdirs(parent)
            if not fs.rename(src, dst):
                raise CommitError(f"cannot rename {src} to {dst} (the journal {_journal(output)} stays: rerun)")
        if i == 0:
            failpoint("between_renames")
    failpoint("before_cleanup")
    if fs.exists(staging) and not keep_staging:
        fs.delete(staging)
    fs.delete(_journal(output))


def recover(output: str, spark=None, fs: Fs | None = None) -> str | None:
    """Roll an interrupted commit forward if `<output>/_commit.json` exists; returns what was done (or None).

    Safe to call from a reader; a run calls it under the output lock, and then also removes the staging
    folders of runs that died before their commit point (nothing else can be writing them then)."""
    fs = fs or fs_for(output, spark)
    output = output.rstrip("/")
    text = fs.read_text(_journal(output))
    if text is None:
        return None
    try:
        journal = json.loads(text)
        moves = [(str(a), str(b)) for a, b in journal["moves"]]
        staging = str(journal["staging"])
    except (ValueError, KeyError, TypeError) as exc:
        # The journal is renamed into place whole, so this is damage from outside: refuse to guess.
        raise CommitError(f"{_journal(output)} is unreadable ({exc}): inspect it by hand") from None
    _apply(fs, output, staging, moves)
    return f"rolled forward the interrupted commit of {staging} ({len(moves)} moves)"


def remove_orphan_staging(output: str, spark=None, fs: Fs | None = None) -> list[str]:
    """Delete `_staging-*` folders left by runs that died before committing. Only under the output lock."""
    fs = fs or fs_for(output, spark)
    output = output.rstrip("/")
    gone = []
    for name in fs.list_names(output):
        if name.startswith(STAGING_PREFIX) or name.startswith("_commit.json.tmp-"):
            fs.delete(f"{output}/{name}")
            gone.append(name)
    return gone
