"""The cause tests (compare/diagnosis.py) on hand-made evidence: which setting each set of figures names, with
which confidence and bound, and how the causes are ordered beside hints.py's hints."""
from __future__ import annotations


from compare_frames import cfg
from event_replay.compare.diagnosis import (HIGH, LOW, MEDIUM, Evidence, _direction, allowed_lateness, diagnose,
                                            direction_only, idle_timeout, no_constant_shift, out_of_orderness,
                                            settings_agree, with_causes)
from event_replay.compare.silences import Silences
from event_replay.compare.watermark_shift import ShiftFigures


def _shift(pairs=20, same=20, sampled=20, zero=1.0, shift=0, share=1.0):
    return ShiftFigures(pairs=pairs, same_first=same, sampled=sampled, zero_share=zero, shift_ms=shift,
                        shift_share=share, other_first=None)


def _ev(shift, **kw):
    base = dict(silences=None, late_replay_only=0, late_live_only=0, refired_replay=0, refired_live=0, differing=5)
    base.update(kw)
    return Evidence(shift=shift, **base)


CFG = cfg()  # max out-of-orderness 1 s, no idle timeout, no allowed lateness
IDLE = CFG.with_overrides(watermark={"idle_timeout": "30s"})


def test_direction():
    assert _direction(_ev(None, late_live_only=1, refired_replay=2, late_replay_only=2)) == "ahead"
    assert _direction(_ev(None, late_replay_only=1, refired_live=1)) == "behind"
    assert _direction(_ev(None, late_replay_only=1, late_live_only=1)) is None


def test_shift_names_out_of_orderness_with_its_candidate():
    [c] = out_of_orderness(_ev(_shift(zero=0.0, shift=500, share=1.0)), CFG)
    assert (c["setting"], c["confidence"], c["candidates"]) == ("max_out_of_orderness", HIGH,
                                                                {"max_out_of_orderness": [1500]})
    assert "the live job ran with 1500ms" in c["text"] and "500 ms behind" in c["text"]
    [c] = out_of_orderness(_ev(_shift(zero=0.0, shift=-250, share=0.95, sampled=5)), CFG)
    assert (c["confidence"], c["candidates"]) == (MEDIUM, {"max_out_of_orderness": [750]})
    assert "ahead of" in c["text"]
    assert out_of_orderness(_ev(_shift(shift=-2000, share=1.0)), CFG) == []  # a negative delay: no cause
    assert out_of_orderness(_ev(_shift(shift=500, share=0.5)), CFG) == []  # not found
    assert out_of_orderness(_ev(_shift(shift=0)), CFG) == []


def test_one_ms_shift_names_the_flavour_too():
    [c] = out_of_orderness(_ev(_shift(zero=0.0, shift=1)), CFG)
    assert c["setting"] == "watermark_flavour"
    assert c["candidates"] == {"max_out_of_orderness": [1001]}
    assert "SQL (max - d)" in c["text"]


def test_idle_timeout_from_other_first_firings_with_silences_bound():
    sil = Silences(windows=4, shortest_ms=12_000, median_ms=20_000, longest_ms=40_000, split="p1", split_windows=3)
    e = _ev(_shift(pairs=10, same=6), silences=sil, late_live_only=3)
    [c] = idle_timeout(e, IDLE)
    assert (c["setting"], c["confidence"], c["direction"], c["bound_ms"]) == ("idle_timeout", HIGH, "ahead", 12_000)
    assert "a shorter idle timeout than the replay's 30s" in c["text"]
    assert "4 of the 10 windows" in c["evidence"] and "split p1 in 3" in c["evidence"]
    [c] = idle_timeout(_ev(_shift(pairs=10, same=6), silences=sil, late_replay_only=3), IDLE)
    assert (c["direction"], c["bound_ms"]) == ("behind", 40_000)
    [c] = idle_timeout(_ev(_shift(pairs=10, same=6), split_not_read="p2"), IDLE)
    assert c["confidence"] == MEDIUM and "never read split p2" in c["text"]
    assert idle_timeout(_ev(_shift(pairs=10, same=10)), IDLE) == []  # every first firing agrees
    assert idle_timeout(_ev(None), IDLE) == []


def test_idle_beside_a_shift_speaks_only_with_near_idle_windows():
    shifted = _shift(zero=0.0, shift=500)
    assert idle_timeout(_ev(shifted, near_idle=3, differing=4), CFG) == []  # the replay has no idle timeout
    [c] = idle_timeout(_ev(shifted, near_idle=3, differing=4), IDLE)
    assert (c["confidence"], c["bound_ms"]) == (MEDIUM, None)
    [c] = idle_timeout(_ev(shifted, near_idle=1, differing=4), IDLE)
    assert c["confidence"] == LOW


def test_allowed_lateness_when_first_firings_agree():
    late = CFG.with_overrides(window={"allowed_lateness": "5s"})
    [c] = allowed_lateness(_ev(_shift(pairs=12), refired_live=2, late_replay_only=3, accepted_lateness_ms=7_000), late)
    assert (c["setting"], c["confidence"], c["direction"], c["bound_ms"]) == ("allowed_lateness", HIGH, "behind",
                                                                             7_000)
    assert "a larger allowed lateness than the replay's 5s, above 7s" in c["text"]
    [c] = allowed_lateness(_ev(_shift(pairs=3), refired_replay=1, late_live_only=1, accepted_lateness_ms=7_000), late)
    assert (c["confidence"], c["direction"], c["bound_ms"]) == (MEDIUM, "ahead", None)
    assert allowed_lateness(_ev(_shift(pairs=12, same=11), refired_live=2), late) == []
    assert allowed_lateness(_ev(_shift(pairs=12)), late) == []  # nothing re-fired, nothing late


def test_settings_agree_and_no_shift_and_direction_only():
    [c] = settings_agree(_ev(_shift(pairs=12)))
    assert (c["setting"], c["confidence"]) == ("none", HIGH)
    assert settings_agree(_ev(_shift(pairs=12), late_live_only=1)) == []
    assert settings_agree(_ev(_shift(pairs=12), differing=0)) == []
    [c] = no_constant_shift(_ev(_shift(zero=0.3, shift=7, share=0.6)), CFG)
    assert (c["setting"], c["confidence"]) == ("emission", LOW)
    assert "more than 60% of the 20 distinct" in c["evidence"]
    assert no_constant_shift(_ev(_shift(zero=0.3, shift=7, share=0.95)), CFG) == []
    [c] = direction_only(_ev(None, late_replay_only=2), CFG)
    assert (c["setting"], c["direction"]) == ("watermark", "behind")
    assert "larger max out-of-orderness (replay: 1s)" in c["text"]
    assert direction_only(_ev(_shift(), late_replay_only=2), CFG) == []
    assert direction_only(_ev(None), CFG) == []


def test_diagnose_orders_by_confidence_and_with_causes_supersedes():
    shifted = _shift(zero=0.0, shift=500, share=0.95, sampled=5)  # medium out-of-orderness
    causes = diagnose(_ev(shifted, near_idle=1, differing=4), IDLE)
    assert [(c["setting"], c["confidence"]) for c in causes] == [("max_out_of_orderness", MEDIUM),
                                                                  ("idle_timeout", LOW)]
    hints = [{"kind": "refirings"}, {"kind": "split_not_read"}, {"kind": "duplicates"}]
    high = {"kind": "cause", "confidence": HIGH}
    low = {"kind": "cause", "confidence": LOW}
    assert with_causes([low, high], hints) == [high, hints[1], low, hints[2]]
    assert with_causes([low], hints) == [hints[1], low, hints[0], hints[2]]
