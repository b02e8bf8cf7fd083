"""Distinct values of a numpy array by one sort.

NumPy 2.4's `np.unique` finds distinct values through a hash table, many times slower than a sort on the driver's
arrays of millions of ticks (BENCHMARKS.md, session 13); a sort then a comparison of neighbours gives the same array.
"""
from __future__ import annotations

import numpy as np


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct values of `values`, ascending (np.unique's result), of its dtype."""
    s = np.sort(np.asarray(values).ravel())
    if len(s) == 0:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]
