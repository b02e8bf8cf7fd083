"""The demo's stand-in live output (jobs/live/demo/, made by Flink's own classes from the demo sample with other
settings: scripts/make_demo_live.py) is what the script makes today: regenerated and compared file by file."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "jobs" / "live" / "demo"

pytestmark = pytest.mark.flink


def test_shipped_demo_live_output_is_current(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_demo_live

    made = tmp_path / "demo"
    make_demo_live.write(made)
    files = sorted(p.relative_to(made).as_posix() for p in made.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(SHIPPED).as_posix() for p in SHIPPED.rglob("*") if p.is_file())
    stale = [f for f in files if (made / f).read_bytes() != (SHIPPED / f).read_bytes()]
    assert not stale, f"jobs/live/demo is stale ({', '.join(stale)}): run `make demo-live`"
    assert any(f.startswith("firings/dt=") for f in files) and any(f.startswith("late/dt=") for f in files)
