"""The cause `replay compare` names first, against live outputs made by Flink's own classes (the differential
harness, tests/flink) that differ from the replay in exactly one setting each (issue 47).

The replay runs the settings of the issue's live job: tumbling 5 s, allowed lateness 0, bounded out-of-orderness
300 ms, periodic 200 ms, idle timeout 1.5 s, over a short version of live_cases' log (four splits, a row every
1-3 s per split, p3 silent 20 s every two minutes). Each live job changes one of them, as in the issue's table:
idle timeout 6 s, max out-of-orderness 2 s, allowed lateness 1 s. The comparison's first hint must be the settings
search's full agreement on that setting ("with idle timeout 3.0 s the replay agrees on 100% of windows"), the next
the cause with its evidence, certain; no split is said never read.
Two more causes, cheap: the SQL flavour (watermark max - d, not max - d - 1), which the outputs cannot tell from an
out-of-orderness 1 ms smaller, so both are named; and a split the live job really never read, named first.
Then the causes that are not a setting the search can replay: a longer emission interval (1 s: named with the idle
timeout, which leaves the same trace on this log, where an idle timeout agrees fully; named first, alone, on a
steady log where idleness never comes into play and no idle timeout agrees: STEADY), a side input holding the
live watermark (the replay counts p3 at +inf), duplicates from an at-least-once sink, and another aggregate
(`total` is count(value) in the live job). And every view of one comparison shows the same diagnosis.
"""
from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from event_replay.semantics.model import LogRow  # noqa: E402
from live_cases import BASE, H, SINK_COLUMNS, production_log, write_log, write_sink  # noqa: E402

pytestmark = [pytest.mark.flink, pytest.mark.spark]

ROWS = tuple(production_log(seed=47, hours=0.15))
SPLITS = ["p0", "p1", "p2", "p3"]


def steady_log(seed: int = 47, seconds: int = 90) -> list[LogRow]:
    """Four splits, a row every 100-600 ms each, never silent for long: no split goes idle at the idle timeout of
    1.5 s, whatever the emission interval (Flink checks idleness at each tick)."""
    rng = random.Random(seed)
    start = BASE + H
    rows = []
    for split in SPLITS:
        t, offset = start + rng.randint(0, 99), 0
        while t < start + seconds * 1000:
            delay = int(rng.expovariate(1 / 300))
            rows.append(LogRow(split, offset, t, t - delay, f"k{rng.randrange(4)}", {"value": rng.randint(1, 100)}))
            offset += 1
            t += rng.randint(100, 600)
    return rows


STEADY = tuple(steady_log())
# name: (the live job's one change, section -> keys; the log it read)
LIVE = {
    "idle_timeout": ({"watermark": {"idle_timeout": "6s"}}, ROWS),
    "max_out_of_orderness": ({"watermark": {"max_out_of_orderness": "2s"}}, ROWS),
    "allowed_lateness": ({"window": {"allowed_lateness": "1s"}}, ROWS),
    "sql_flavour": ({"watermark": {"strategy": "sql"}}, ROWS),
    "split_never_read": ({"source": {"splits": ["p0", "p1", "p3"]}}, tuple(r for r in ROWS if r.split != "p2")),
    "emission_interval": ({"watermark": {"interval": "1s"}}, ROWS),
    "emission_interval_alone": ({"watermark": {"interval": "1s"}}, STEADY),  # replayed from its own log
    "side_input": ({}, ROWS),  # the live job waits for p3; the replay's config counts it at +inf (SIDE_INPUT)
    "duplicates": ({}, ROWS),  # its sink writes a span of firings twice (write_sink's reemit)
    "changed_aggregate": ({"aggregations": {"total": "count(value)"}}, ROWS),
}
SIDE_INPUT = {"source": {"splits": ["p0", "p1", "p2"], "side_inputs": ["p3"]}}
SEARCHED = {"idle_timeout": 6000, "max_out_of_orderness": 2000, "allowed_lateness": 1000}


def _raw(source_path: str = "unused", output_path: str = "unused", **changes: dict[str, Any]) -> dict[str, Any]:
    raw = {"source": {"path": source_path, "splits": list(SPLITS)},
           "watermark": {"strategy": "bounded_out_of_orderness", "max_out_of_orderness": "300ms", "emit": "periodic",
                         "interval": "200ms", "idle_timeout": "1500ms"},
           "window": {"type": "tumbling", "size": "5s", "allowed_lateness": "0s"},
           "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
           "replay": {"end_of_input": "flush"}, "output": {"path": output_path}}
    for section, values in changes.items():
        raw[section].update(values)
    return raw


@pytest.fixture(scope="module")
def world(tmp_path_factory, spark):
    """The log replayed with the replay's settings, and every live job's sink (Flink, one JVM)."""
    from event_replay.job import run_replay
    from event_replay.semantics.config import parse_config
    from flink_harness import run_flink

    root = tmp_path_factory.mktemp("diagnosis-vs-flink")
    write_log(ROWS, root / "log")
    cfg = parse_config(_raw(str(root / "log"), str(root / "out")))
    side_cfg = parse_config(_raw(str(root / "log"), str(root / "out_side"), **SIDE_INPUT))
    write_log(STEADY, root / "steady_log")
    steady_cfg = parse_config(_raw(str(root / "steady_log"), str(root / "out_steady")))
    for c in (cfg, side_cfg, steady_cfg):
        run_replay(spark, c)
    results = run_flink([(list(rows), parse_config(_raw(**change)), None) for change, rows in LIVE.values()])
    sinks = {name: write_sink(r, root / "live" / name, reemit=_middle(r) if name == "duplicates" else None)
             for name, r in zip(LIVE, results)}
    return {"root": root, "cfg": cfg, "side_cfg": side_cfg, "steady_cfg": steady_cfg, "sinks": sinks,
            "summaries": {}}


def _middle(result) -> tuple[int, int]:
    """The fire watermarks of the middle third of the live run: the span a restart re-emits."""
    wms = sorted(f.fire_watermark for f in result.firings if f.fire_watermark is not None)
    return wms[len(wms) // 3], wms[2 * len(wms) // 3]


def _compare(spark, world, name: str, search: bool) -> dict:
    from event_replay.commands.compare import _rank_settings
    from event_replay.compare.live_spec import LiveSpec
    from event_replay.compare.run import CompareOptions, compare

    if (name, search) in world["summaries"]:
        return world["summaries"][name, search]
    sink, late = world["sinks"][name]
    spec = LiveSpec(path=str(sink), format="json", columns=SINK_COLUMNS, late_path=str(late), keeps_updates=True)
    # a run folder's compare/ (as the DAG's compare task writes it), so that the runs page finds it too
    options = CompareOptions(out_dir=str(world["root"] / "runs" / f"{name}-{search}" / "compare"),
                             rank_settings=_rank_settings(spec) if search else None)
    cfg = {"side_input": world["side_cfg"], "emission_interval_alone": world["steady_cfg"]}.get(name, world["cfg"])
    world["summaries"][name, search] = compare(spark, cfg, spec, options)
    return world["summaries"][name, search]


@pytest.mark.parametrize("setting", list(SEARCHED))
def test_the_first_hint_names_the_one_setting_that_differs(spark, world, setting):
    from event_replay.compare.page import render
    from event_replay.compare.settings_search import SETTING_WORDS
    from event_replay.semantics.durations import spoken_duration

    s = _compare(spark, world, setting, search=True)
    assert s["totals"]["differing"] > 0, s["totals"]
    first, cause = s["hints"][0], s["hints"][1]
    assert (first["kind"], first["confidence"], first["setting"]) == ("search", "confirmed", setting), s["hints"]
    assert first["text"].startswith(f"With {SETTING_WORDS[setting]} {spoken_duration(first['value_ms'])} the replay "
                                    "agrees on 100% of windows"), first["text"]
    # On the live job's side of the replay's value; this short log may not tell the live value from a neighbour
    # (idle timeouts of 3 s and 6 s idle the same silences here): the search has checked that it agrees fully.
    mine = {"idle_timeout": 1500, "max_out_of_orderness": 300, "allowed_lateness": 0}[setting]
    assert (first["value_ms"] > mine) == (SEARCHED[setting] > mine), first
    assert (cause["kind"], cause["setting"]) == ("cause", setting), cause
    # a later live firing at the replay's split values is also a longer emission interval: both named, the
    # search (first) decides
    certain = "medium" if setting == "idle_timeout" else "high"
    assert cause["confidence"] == certain and ("emission interval" in cause["text"]) == (certain == "medium"), cause
    assert "Evidence: " in cause["text"] and cause["evidence"] in cause["text"]
    assert not [h for h in s["hints"] if h["kind"] == "split_not_read"], s["hints"]
    # The page shows the same hints in the same order (summary.json is what it renders).
    page = render(s)
    assert page.index(_escaped(first["text"][:60])) < page.index(_escaped(cause["text"][:60]))


def test_sql_flavour_and_one_ms_less_out_of_orderness_are_both_named(spark, world):
    s = _compare(spark, world, "sql_flavour", search=False)
    first = s["hints"][0]
    assert (first["kind"], first["setting"]) == ("cause", "watermark_flavour"), s["hints"]
    assert "SQL" in first["text"] and "max out-of-orderness 299ms" in first["text"]
    assert "cannot tell these two apart" in first["text"]


def test_a_split_never_read_is_named_first(spark, world):
    s = _compare(spark, world, "split_never_read", search=False)
    first = s["hints"][0]
    assert (first["kind"], first.get("split")) == ("split_not_read", "p2"), s["hints"]
    idle = [h for h in s["hints"] if h.get("setting") == "idle_timeout"]
    assert all("never read split p2" in h["text"] and h["confidence"] != "high" for h in idle), idle


def test_a_longer_emission_interval_is_named_with_the_idle_timeout(spark, world):
    """A live interval of 1 s fires windows later at the replay's own split values, as a longer idle timeout does,
    and on this log an idle timeout agrees fully (the same firings): the outputs cannot separate the two causes,
    so the first hint says so and names both. On a log where no idle timeout agrees, the interval leads alone
    (the next test)."""
    s = _compare(spark, world, "emission_interval", search=True)
    assert s["totals"]["differing"] > 0, s["totals"]
    first = s["hints"][0]
    assert (first["kind"], first["confidence"]) == ("search", "confirmed"), s["hints"]
    assert (first["setting"], first["also"]) == ("idle_timeout", "emission_interval"), first
    assert "emission interval" in first["text"] and "cannot tell these two apart" in first["text"], first
    idle = next(h for h in s["hints"] if h.get("setting") == "idle_timeout" and h["kind"] == "cause")
    assert "emission interval" in idle["text"] and "Evidence: " in idle["text"] and idle["confidence"] != "high"
    assert not [h for h in s["hints"] if h["kind"] == "split_not_read"], s["hints"]


def test_a_longer_emission_interval_alone_is_named_first(spark, world):
    """On a steady log idleness never comes into play: a live interval of 1 s fires windows at later ticks, at the
    replay's own split watermarks, and no idle timeout the search replays agrees. The interval leads, with the
    search's figures as its evidence; the idle timeout's cause follows, naming the interval too."""
    s = _compare(spark, world, "emission_interval_alone", search=True)
    assert s["totals"]["differing"] > 0, s["totals"]
    first = s["hints"][0]
    assert (first["kind"], first["setting"], first["confidence"]) == ("cause", "emission_interval", "medium"), \
        s["hints"]
    assert first["text"].startswith("The watermark emission interval differs"), first["text"]
    assert "no idle timeout makes the replay agree" in first["evidence"] and "Evidence: " in first["text"], first
    tried = [r for r in s["search"] if r["setting"] == "idle_timeout"]
    assert tried and all(r["live_agreement_pct"] < 100 for r in tried), s["search"]
    idle = next(h for h in s["hints"] if h.get("setting") == "idle_timeout" and h["kind"] == "cause")
    assert "emission interval" in idle["text"] and "cannot tell these two apart" in idle["text"], idle
    assert not [h for h in s["hints"] if h["kind"] == "split_not_read"], s["hints"]
    assert s["diagnosis"]["headline"].startswith("The watermark emission interval differs"), s["diagnosis"]


def test_a_side_input_holding_the_live_watermark_is_named(spark, world):
    s = _compare(spark, world, "side_input", search=False)
    first = s["hints"][0]
    assert (first["kind"], first["setting"]) == ("cause", "side_input"), s["hints"]
    assert "A side input held the live watermark" in first["text"] and "p3" in first["text"], first
    assert "cannot tell these two apart" in first["text"] and "Evidence: " in first["text"]
    assert not [h for h in s["hints"] if h["kind"] == "split_not_read"], s["hints"]


def test_duplicates_of_an_at_least_once_sink_are_named_not_a_setting(spark, world):
    s = _compare(spark, world, "duplicates", search=True)
    assert s["totals"]["differing"] == 0 and s["totals"]["duplicate"] > 0, s["totals"]
    first = s["hints"][0]
    assert first["kind"] == "duplicates" and "at-least-once sink re-emitted" in first["text"], s["hints"]
    assert not [h for h in s["hints"] if h["kind"] in ("cause", "search", "split_not_read")], s["hints"]
    assert s["diagnosis"]["kind"] == "duplicates"


def test_another_aggregate_is_named_first(spark, world):
    s = _compare(spark, world, "changed_aggregate", search=False)
    first = s["hints"][0]
    assert (first["kind"], first["aggregate"]) == ("changed_aggregate", "total"), s["hints"]
    assert "the live job computes total differently" in first["text"]
    # the watermarks agree: said after it, with its evidence; no setting is blamed
    assert s["hints"][1]["setting"] == "none" and "Evidence: " in s["hints"][1]["text"], s["hints"]
    assert not [h for h in s["hints"] if h.get("setting") not in (None, "none")], s["hints"]
    assert not [h for h in s["hints"] if h["kind"] == "split_not_read"], s["hints"]


def test_every_view_shows_the_same_diagnosis(spark, world):
    """summary.json, the compare page, the why-report's "versus live" section and the runs page: one diagnosis
    (compare.summary.diagnosis), here the settings search's full agreement on the idle timeout."""
    import json

    from event_replay.compare.page import render, versus_live_section
    from event_replay.compare.summary import diagnosis
    from event_replay.why.versus_live import versus_live

    s = _compare(spark, world, "idle_timeout", search=True)
    folder = Path(s["out_dir"])
    saved = json.loads((folder / "summary.json").read_text())
    found = diagnosis(saved)
    assert found is not None and found["kind"] == "search" and "idle timeout" in found["headline"], found
    assert saved["diagnosis"] == found == s["diagnosis"]
    head = _escaped(found["headline"])
    page = (folder / "index.html").read_text()
    assert page == render(saved) and head in page[page.index("id='diagnosis'"):][:2000]
    # the why-report of the run folder (its sibling compare/)
    entry = versus_live(folder.parent / "why_report", str(world["root"] / "out"))
    assert entry["diagnosis"] == found
    section = versus_live_section(entry)
    assert head in section[section.index("id='versus-live-diagnosis'"):][:2000]
    # the runs page's cell for the run folder
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "plugins"))
    from replay_runs.runs import live_agreement

    assert live_agreement(folder.parent).diagnosis == found["headline"]


def _escaped(text: str) -> str:
    import html

    return html.escape(text)
