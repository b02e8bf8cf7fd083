"""The settings search's plan and verdict (compare/settings_search.py) with a stand-in for the replays: which
values it tries for each cause, that the certain causes go first and the others only when those do not agree
fully, and what it says. The replays themselves (tuning/ through commands/compare.py) against Flink:
test_diagnosis_vs_flink.py."""
from __future__ import annotations

from event_replay.compare.settings_search import candidates, search
from event_replay.semantics.config import parse_config

CFG = parse_config({"source": {"path": "unused", "splits": ["p0"]},
                    "watermark": {"max_out_of_orderness": "300ms", "idle_timeout": "6s"},
                    "window": {"type": "tumbling", "size": "5s", "allowed_lateness": "1s"},
                    "aggregations": {"cnt": "count(*)"}, "output": {"path": "unused"}})
DELAY = {"setting": "max_out_of_orderness", "confidence": "high", "candidates": {"max_out_of_orderness": [2000]}}
IDLE_AHEAD = {"setting": "idle_timeout", "confidence": "high", "direction": "ahead", "bound_ms": 1600}
IDLE_GUESS = {"setting": "idle_timeout", "confidence": "medium", "direction": "behind", "bound_ms": 18_000}
LATER = {"setting": "allowed_lateness", "confidence": "high", "direction": "ahead"}


def test_candidates_follow_the_evidence():
    assert candidates([DELAY], CFG) == [("max_out_of_orderness", 2000)]
    # shorter than the replay's 6 s and than the silences the live job idled in (1.6 s)
    assert candidates([IDLE_AHEAD], CFG) == [("idle_timeout", v) for v in (1500, 1000, 500)]
    # longer: two just above 6 s, one above the longest silence, and no idleness at all
    assert candidates([IDLE_GUESS], CFG) == [("idle_timeout", v) for v in (8000, 10_000, 20_000, None)]
    # smaller lateness: none first, then the nearest below 1 s
    assert candidates([LATER], CFG) == [("allowed_lateness", v) for v in (0, 500, 200, 100)]


def _ranker(agreeing: dict[tuple, float], calls: list):
    def rank(cfg, settings):
        calls.append(list(settings))
        return [{"live_score": agreeing.get(s, 90.0) / 100, "live_agreement_pct": agreeing.get(s, 90.0),
                 "live_late_matched": 4, "live_late_union": 4, "live_windows": 50} for s in settings]
    return rank


def test_the_certain_cause_is_replayed_first_and_a_full_agreement_leads():
    calls: list = []
    found = search(CFG, [DELAY, IDLE_GUESS], _ranker({(2000, 6000, 1000): 100.0}, calls))
    assert calls == [[(2000, 6000, 1000)]]  # the guess is not replayed: the certain cause agrees fully
    assert found["hint"]["confidence"] == "confirmed" and found["hint"]["text"].startswith(
        "With max out-of-orderness 2.0 s the replay agrees on 100% of windows (50) and every late row (4)")


def test_without_a_full_agreement_the_others_are_tried_and_the_closest_is_said():
    calls: list = []
    found = search(CFG, [DELAY, IDLE_GUESS], _ranker({(300, 20_000, 1000): 99.0}, calls), own_pct=95.0)
    assert len(calls) == 3 and calls[1][0] == (300, 8000, 1000)
    # the best (idle timeout 20 s) beats the replay's own 95%: the other suspect is tried on top of it
    assert calls[2] == [(2000, 20_000, 1000)]
    assert found["hint"]["confidence"] == "partial" and "the closest is idle timeout 20.0 s, agreeing on 99.00%" \
        in found["hint"]["text"]
    assert [r["live_rank"] for r in found["rows"]] == [1, 2, 2, 2, 2, 2]


def test_two_settings_found_one_after_the_other():
    calls: list = []
    found = search(CFG, [DELAY, IDLE_GUESS], _ranker({(2000, 6000, 1000): 97.0, (2000, 20_000, 1000): 100.0},
                                                     calls), own_pct=95.0)
    assert calls[-1] == [(2000, v, 1000) for v in (5000, 8000, 20_000, 45_000)]  # both sides of 6 s
    hint = found["hint"]
    assert (hint["confidence"], hint["setting"]) == ("confirmed", "max_out_of_orderness+idle_timeout")
    assert hint["text"].startswith("With max out-of-orderness 2.0 s and idle timeout 20.0 s the replay agrees on "
                                   "100% of windows"), hint["text"]


def test_a_calibration_grid_row_is_ranked_not_replayed_again():
    calls: list = []
    grid = [{"max_out_of_orderness_ms": 2000, "idle_timeout_ms": 30_000, "allowed_lateness_ms": 1000,
             "live_score": 1.0, "live_agreement_pct": 100.0, "live_late_matched": 4, "live_late_union": 4,
             "live_windows": 50},
            {"max_out_of_orderness_ms": 2000, "idle_timeout_ms": 6000, "allowed_lateness_ms": 1000,
             "live_score": 0.97, "live_agreement_pct": 97.0, "live_late_matched": 4, "live_late_union": 4,
             "live_windows": 50}]
    found = search(CFG, [DELAY, IDLE_GUESS], _ranker({}, calls), known=grid, own_pct=95.0)
    assert calls == []  # the grid's rows hold the certain cause's variant and a full agreement: nothing replayed
    assert found["hint"]["text"].startswith("With max out-of-orderness 2.0 s and idle timeout 30.0 s the replay "
                                            "agrees on 100% of windows (50)"), found["hint"]["text"]
    assert "the calibration grid's 2 variants" in found["hint"]["text"]
