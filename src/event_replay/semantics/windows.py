"""Window assigners (SEMANTICS §5), with Flink's arithmetic."""
from __future__ import annotations

from .window_config import WindowConfig
from .durations import POS_INF

Window = tuple[int, int]  # [start, end)


def max_timestamp(window: Window) -> int:
    return window[1] - 1


def cleanup_time(window: Window, allowed_lateness: int) -> int:
    """When the window's state is dropped; saturates like Flink's instead of overflowing."""
    t = max_timestamp(window) + allowed_lateness
    return POS_INF if t > POS_INF else t


def window_start(t: int, size: int, offset: int) -> int:
    return t - ((t - offset) % size)  # Python's % is never negative for a positive size


def tumbling(t: int, size: int, offset: int = 0) -> list[Window]:
    start = window_start(t, size, offset)
    return [(start, start + size)]


def sliding(t: int, size: int, slide: int, offset: int = 0) -> list[Window]:
    """Every window of length `size`, starting at offset + k*slide, that contains t (latest first, like Flink)."""
    windows = []
    start = window_start(t, slide, offset)
    while start > t - size:
        windows.append((start, start + size))
        start -= slide
    return windows


def cumulate(t: int, size: int, step: int, offset: int = 0) -> list[Window]:
    """Flink's CumulativeWindowAssigner: the windows of t's max-size window [start, start + size) that end on a step
    after t, [start, first_end), [start, first_end + step), ... [start, start + size) (shortest first, like Flink)."""
    start = window_start(t, size, offset)
    first_end = window_start(t, step, offset) + step
    return [(start, end) for end in range(first_end, start + size + 1, step)]


def assign(t: int, cfg: WindowConfig) -> list[Window]:
    if cfg.type == "tumbling":
        return tumbling(t, cfg.size_ms, cfg.offset_ms)
    if cfg.type == "sliding":
        return sliding(t, cfg.size_ms, cfg.slide_ms, cfg.offset_ms)
    if cfg.type == "cumulate":
        return cumulate(t, cfg.size_ms, cfg.step_ms, cfg.offset_ms)
    return [(t, t + cfg.gap_ms)]  # a session's own window, merged by the caller


def intersects(a: Window, b: Window) -> bool:
    """Flink's TimeWindow.intersects: touching windows count, so [0,10) and [10,20) merge."""
    return a[0] <= b[1] and a[1] >= b[0]


def merge_into(new: Window, existing: list[Window]) -> tuple[Window, list[Window]]:
    """Merge a session window into a key's windows (pairwise disjoint, non-touching):
    returns the covering window and the existing windows it swallowed."""
    merged = new
    swallowed: list[Window] = []
    changed = True
    while changed:  # repeatedly: a grown window may reach further windows
        changed = False
        for w in existing:
            if w not in swallowed and intersects(merged, w):
                merged = (min(merged[0], w[0]), max(merged[1], w[1]))
                swallowed.append(w)
                changed = True
    return merged, swallowed
