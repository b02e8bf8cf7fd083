"""`project`: the orchestration tests' small project (backfill_cases.py)."""
from __future__ import annotations

import pytest

from backfill_cases import project_tree


@pytest.fixture
def project(tmp_path):
    return project_tree(tmp_path)
