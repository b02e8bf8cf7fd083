"""Quality of a replay's outputs: Great Expectations suites (validation.py) and the batches they run on (prepare.py).

The package imports none of its modules (GX is heavy, and most callers need only the batches); it quiets GX's
logger before any of them imports GX: importing it logs hundreds of INFO lines (_docs_decorators)."""
from __future__ import annotations

import logging
import os


def quiet_gx() -> None:
    """GX logs an INFO line per expectation field it has no default for (`_get_default_value called with key`):
    hundreds per run, burying the task's own lines. WARNING and above only, unless REPLAY_GX_LOG_LEVEL says."""
    logging.getLogger("great_expectations").setLevel(os.environ.get("REPLAY_GX_LOG_LEVEL", "WARNING").upper())


quiet_gx()
