"""Report folders on the local filesystem (the sample log, a what-if grid's result, a comparison's compare/): filled
in a hidden staging folder next to the target, then swapped in, so a reader sees the old folder or the new one,
never half of one; and a Spark frame as one file (CSV or Parquet) in such a folder."""
from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any, Callable


def replace_folder(out: Path, fill: Callable[[Path], Any]) -> Any:
    """fill(staging) writes the new content; it then replaces `out` (the previous one removed once the new one is in
    place). A failure leaves `out` as it was and no staging folder. Returns what fill returned."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.with_name(f".{out.name}.staging-{uuid.uuid4().hex[:8]}")  # hidden: never listed as a result
    staging.mkdir()
    try:
        result = fill(staging)
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}.previous-{uuid.uuid4().hex[:8]}")
            out.rename(old)
        staging.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return result
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_one_file(df, target: Path, fmt: str = "csv") -> None:
    """One file (CSV with a header, or Parquet): Spark writes a folder, its single part is moved to `target`."""
    tmp = target.with_name(f".{target.name}.tmp")
    writer = df.coalesce(1).write.mode("overwrite")
    writer.option("header", True).csv(str(tmp)) if fmt == "csv" else writer.parquet(str(tmp))
    (part,) = tmp.glob(f"part-*.{fmt}")
    part.replace(target)
    shutil.rmtree(tmp, ignore_errors=True)
