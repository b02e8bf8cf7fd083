"""Quality of a replay's outputs: Great Expectations suites (validate) and the batches they run on.

Imports are lazy: GX and matplotlib are heavy, and the CLI imports this package only for `replay validate`.
"""
from __future__ import annotations

from typing import Any

__all__ = ["validate", "main_validate", "ValidationReport", "ExpectationOutcome"]


def __getattr__(name: str) -> Any:
    if name in ("validate", "main_validate", "ValidationReport", "ExpectationOutcome"):
        from . import validation as _v
        return getattr(_v, name)
    raise AttributeError(name)
