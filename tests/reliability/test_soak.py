"""The soak's short version (issue 32, item 1; `make test-integration`): scripts/soak.py for a few minutes, with the
same services, the same chaos and the same checks as `make soak` (30 minutes, RELIABILITY.md): backfill DAG runs at
once on Airflow (LocalExecutor, PostgreSQL) against a Spark standalone cluster, half of them on one output, the
scheduler and Spark drivers killed with SIGKILL; then every committed partition equals an uninterrupted run, nothing
is left over and the row accounting holds.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.cluster, pytest.mark.timeout(3600)]
ROOT = Path(__file__).resolve().parents[2]


def _soak_module():
    spec = importlib.util.spec_from_file_location("soak", ROOT / "scripts" / "soak.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_short_soak(tmp_path):
    soak = _soak_module()
    if soak.subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "bindir"],
                           capture_output=True).returncode != 0:
        pytest.skip("PostgreSQL server binaries not installed (apt-get install postgresql)")
    work = tmp_path / "soak"
    rc = soak.main(["--minutes", "4", "--active", "6", "--days", "2", "--partitions-per-job", "1",
                    "--kill-every", "75", "--min-gap", "45", "--retry-delay", "10", "--drain-minutes", "25", "--work", str(work)])
    result = json.loads((work / "soak.json").read_text())
    assert rc == 0, (work / "soak.md").read_text()
    assert result["ok"] and result["partitions_lost_or_wrong"] == 0
    fig = result["airflow"]
    assert fig["runs_triggered"] >= 6 and not fig["runs_unfinished"]
    assert sum(result["kills"].values()) >= 1, result["kills"]
    for name, out in result["outputs"].items():
        assert not out["problems"], (name, out["problems"])
