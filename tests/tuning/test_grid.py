"""The what-if grid (tuning/grid.py): lists parsed with the config's duration parser, deduplicated and sorted,
validated against the config, every refusal a GridError naming the option, before Spark starts."""
from __future__ import annotations

import pytest

from event_replay.semantics.config import parse_config
from event_replay.tuning import GridError, parse_grid
from event_replay.tuning.grid import grid_value, parse_list


def _cfg(source: str, out: str, **watermark):
    return parse_config({
        "source": {"path": source}, "window": {"type": "tumbling", "size": "2s", "allowed_lateness": "500ms"},
        "watermark": {"max_out_of_orderness": "200ms", "interval": "200ms", **watermark},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)"}, "output": {"path": out}})


def test_lists_parse_with_the_config_duration_parser():
    assert parse_list("1s,5s,30s", "--x", allow_none=False) == (1000, 5000, 30000)
    assert parse_list(" 30s , PT1S,1000, 2m ", "--x", allow_none=False) == (1000, 30000, 120000)  # deduplicated
    assert parse_list("2m,none,30s", "--idle-timeout", allow_none=True) == (None, 30000, 120000)
    assert parse_list(["1s", "500ms"], "--x", allow_none=False) == (500, 1000)
    assert parse_list(None, "--x", allow_none=False) is None and parse_list("", "--x", allow_none=False) is None
    assert [grid_value(v) for v in (None, 0, 500, 1500, 30000, 120000, 3_600_000)] == \
        ["none", "0ms", "500ms", "1500ms", "30s", "2m", "1h"]


@pytest.mark.parametrize("args, option", [
    (("1s,5 parsecs", None, None), "--max-out-of-orderness"),
    (("none", None, None), "--max-out-of-orderness"),
    (("1s,,2s", None, None), "--max-out-of-orderness"),
    ((None, "none,soon", None), "--idle-timeout"),
    ((None, "0s,30s", None), "--idle-timeout"),  # the config refuses a zero idle timeout
    ((None, None, "2 weeks"), "--allowed-lateness"),
    ((None, None, "P1M"), "--allowed-lateness"),  # months have no fixed length
])
def test_grid_errors_name_the_option(args, option):
    with pytest.raises(GridError) as e:
        parse_grid(_cfg("unused", "unused"), *args)
    assert e.value.option == option


def test_grid_is_validated_against_the_config():
    per_event = parse_config({"source": {"path": "x"}, "window": {"type": "tumbling", "size": "2s"},
                              "watermark": {"max_out_of_orderness": "1s", "emit": "per_event"},
                              "aggregations": {"cnt": "count(*)"}, "output": {"path": "x"}})
    with pytest.raises(GridError) as e:
        parse_grid(per_event, None, "none,30s")
    assert e.value.option == "--idle-timeout" and "periodic" in e.value.why
    parse_grid(per_event, "0,1s,5s", "none")  # no idleness is fine with per-event emission
    with pytest.raises(GridError) as e:
        parse_grid(_cfg("x", "x"), ",".join(f"{i}s" for i in range(1, 20)), "none,1s,2s,3s")
    assert "--max-out-of-orderness" in e.value.option and "at most" in e.value.why


def test_grid_order_does_not_matter_and_defaults_are_the_config():
    cfg = _cfg("x", "x", idle_timeout="5s")
    g1, v1 = parse_grid(cfg, "30s,1s,5s", "2m,none,30s")
    g2, v2 = parse_grid(cfg, "5s,30s,1s,1s", "none,30s,2m")
    assert g1 == g2 and g1.name == g2.name and [v for v, _ in v1] == [v for v, _ in v2]
    assert g1.name == "delay_1s-5s-30s__idle_none-30s-2m__lateness_500ms"
    assert len(v1) == 9 and v1[0][0].name == "delay 1s, idle none, lateness 500ms"
    for v, c in v1:
        assert (c.watermark.max_out_of_orderness_ms, c.watermark.idle_timeout_ms, c.window.allowed_lateness_ms) == \
            (v.max_out_of_orderness_ms, v.idle_timeout_ms, v.allowed_lateness_ms)
        assert c.window == cfg.window and c.source == cfg.source and c.watermark.interval_ms == 200
    g, v = parse_grid(cfg)
    assert len(v) == 1 and v[0][1] == cfg
