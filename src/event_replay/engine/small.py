"""Small ranges: what the engine skips when a range's rows are few (docs/architecture.md, "What a replay costs").

Below `SMALL_ROWS` rows a Spark job's fixed cost (scheduling, planning, code generation in a cold JVM) is more than
a scan of the rows, so for such a range the engine materialises nothing (no job keeps the rows behind the
watermark or the carried rows' union: each reader scans them again) and computes the windows in the windows
output's own files even when they are fewer than the cores (the write then needs no shuffle of its own; idle cores
cost nothing at that size). The outputs are the same either way: only the plan changes.

Contract: `is_small(rows_at_most)`: whether a range of at most that many rows (None: not known) is small.
"""
from __future__ import annotations

# A scan of 100,000 rows of a log's columns takes a fraction of a second; a job in a fresh driver costs about as
# much in planning and code generation alone (bench/results/issue-52/).
SMALL_ROWS = 100_000


def is_small(rows_at_most: int | None) -> bool:
    """Whether a range with at most `rows_at_most` rows (None: unknown, never small) is small."""
    return rows_at_most is not None and rows_at_most <= SMALL_ROWS
