"""overview.png: its size, and month ticks for a year of days, day ticks for hours."""
from __future__ import annotations

import datetime as dt
import struct

from event_replay.why.overview_plot import HEIGHT_PX, _ticks, plot_overview
from event_replay.why.plot import WIDTH_PX


def _days(n: int) -> list[str]:
    return [(dt.date(2024, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(n)]


def test_a_year_of_days_draws_at_its_documented_size(tmp_path):
    parts = [{"partition": d, "rows_read": 5, "late_rows": i % 3, "quarantined_rows": 0, "idle_share": 0.5,
              "lag_p50_ms": 400.0, "lag_p90_ms": 600.0, "lag_max_ms": 86_400_000 if i == 9 else 900}
             for i, d in enumerate(_days(365))]
    assert plot_overview(tmp_path / "o.png", parts) == (WIDTH_PX, HEIGHT_PX)
    data = (tmp_path / "o.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (WIDTH_PX, HEIGHT_PX)


def test_ticks_at_month_starts_for_days_and_day_starts_for_hours():
    pos, names = _ticks(_days(365))
    assert len(pos) <= 12 and names[0] == "Jan 2024" and "Jul 2024" in names
    hours = [f"{d}T{h:02d}" for d in _days(40) for h in range(24)]
    pos, names = _ticks(hours)
    assert len(pos) <= 12 and names[0] == "2024-01-01" and all(hours[p].endswith("T00") for p in pos)
    assert _ticks(["2024-01-01", "2024-01-02"]) == ([0, 1], ["2024-01-01", "2024-01-02"])
