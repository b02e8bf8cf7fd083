"""Which setting differs between the replay and the live job: cause tests the two outputs pass or fail, each hint
stating its evidence and a confidence, and naming both causes where the outputs cannot separate them.

- max out-of-orderness (or the watermark's flavour): the live fire watermarks are the replay's split watermarks
  shifted by one constant (watermark_shift.py): live lag = replay lag + shift. A shift of 1 ms is also the SQL
  flavour (max - d against the DataStream max - d - 1): both are named;
- idle timeout: no shift (same split watermarks), yet windows first fired at another watermark on each side: the
  two jobs took the minimum over other splits. The silences of the splits at those firings (silences.py) and
  which side dropped rows as late bound the other timeout; a split never read leaves the same trace, so when its
  hint holds too, both are named. A longer emission interval leaves the same trace when the live job fired later
  (the same split values, taken at its ticks; Flink's idleness timer starts at a tick, so the minimums move too):
  both are named, and the settings search decides (no idle timeout agreeing: the interval, settings_search.py);
- allowed lateness: every window both fired was first fired at the same watermark (the watermarks agree), and the
  windows that differ were fired again (fire index > 0) on the side with the larger lateness, with the rows the
  other side dropped as late;
- none of them: the watermarks agree and no re-firing differs: the differences are in the rows or the aggregates
  (hints.py: a split never read, a changed aggregate, duplicates);
- no constant shift at all: a side input holding the live watermark (the replay counts it at +inf), or another
  strategy (per event): both named.
Without live fire watermarks only the direction is known (which side dropped rows as late): named, low confidence.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..semantics.config import JobConfig
from ..semantics.durations import spoken_duration
from .silences import Silences
from .watermark_shift import ShiftFigures
from .wording import fmt_duration, plural

HIGH, MEDIUM, LOW = "high", "medium", "low"
SUPERSEDED = ("live_watermark_behind", "live_watermark_ahead", "refirings", "idleness")
ROW_CAUSES = ("split_not_read", "changed_aggregate")  # hints.py's that name what differs in the rows


@dataclass(frozen=True)
class Evidence:
    """What the cause tests read (run.py gathers it): the shift figures (None without live fire watermarks), the
    silences at the firings that differ (None without them or without the source), late rows on one side only,
    windows fired more often by the replay / by the live job, windows differing, and whether a split looks
    never read (split_read.py's hint)."""
    shift: ShiftFigures | None
    silences: Silences | None
    late_replay_only: int
    late_live_only: int
    refired_replay: int
    refired_live: int
    differing: int
    near_idle: int = 0  # differing windows the replay fired right after a split went idle (or all were)
    accepted_lateness_ms: int | None = None  # the largest lateness of a row late in the replay only
    split_not_read: str | None = None


def _cause(setting: str, confidence: str, evidence: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "cause", "setting": setting, "confidence": confidence, "evidence": evidence,
            "text": f"{text} Evidence: {evidence} (confidence: {confidence}).", **extra}


def _direction(e: Evidence) -> str | None:
    """'ahead' when the live watermark ran ahead of the replay's (rows late in the live job only, re-firings in
    the replay), 'behind' for the reverse, None when the outputs do not say."""
    ahead = e.late_live_only + e.refired_replay
    behind = e.late_replay_only + e.refired_live
    return "ahead" if ahead > behind else "behind" if behind > ahead else None


def _late_rows(e: Evidence) -> str:
    return (f"{plural(e.late_replay_only, 'row', 'rows')} late in the replay only, "
            f"{plural(e.late_live_only, 'row', 'rows')} late in the live job only")


def out_of_orderness(e: Evidence, cfg: JobConfig) -> list[dict[str, Any]]:
    s = e.shift
    if s is None or not s.found or not s.shift_ms:
        return []
    wm = cfg.watermark
    live_delay = wm.max_out_of_orderness_ms + s.shift_ms
    evidence = (f"{s.shift_share:.0%} of the {s.sampled} distinct live fire watermarks are watermarks the replay's "
                f"splits published, shifted by {s.shift_ms:+d} ms ({s.zero_share:.0%} without the shift); "
                f"{_late_rows(e)}")
    confidence = HIGH if s.shift_share >= 0.98 and s.sampled >= 10 else MEDIUM
    if abs(s.shift_ms) == 1:
        other = "SQL (max - d)" if wm.strategy != "sql" else "DataStream (max - d - 1)"
        return [_cause("watermark_flavour", confidence, evidence, (
            f"The live watermark is the replay's shifted by {s.shift_ms:+d} ms: the live job computes it with the "
            f"{other} flavour, or with max out-of-orderness {fmt_duration(max(live_delay, 0))} "
            f"(replay: {fmt_duration(wm.max_out_of_orderness_ms)}); the outputs cannot tell these two apart."),
            candidates={"max_out_of_orderness": [live_delay]} if live_delay >= 0 else {})]
    if live_delay < 0:
        return []
    return [_cause("max_out_of_orderness", confidence, evidence, (
        f"Max out-of-orderness differs: the live job ran with {fmt_duration(live_delay)}, the replay with "
        f"{fmt_duration(wm.max_out_of_orderness_ms)} (its watermark is {abs(s.shift_ms)} ms "
        f"{'behind' if s.shift_ms > 0 else 'ahead of'} the replay's at every split)."),
        candidates={"max_out_of_orderness": [live_delay]})]


def idle_timeout(e: Evidence, cfg: JobConfig) -> list[dict[str, Any]]:
    s = e.shift
    if s is not None and s.found and s.shift_ms:
        return _idle_beside_shift(e, cfg)
    if s is None or s.zero_share < 0.9 or s.same_first >= s.pairs:
        return []
    mine = cfg.watermark.idle_timeout_ms
    other = s.pairs - s.same_first
    evidence = (f"{other} of the {s.pairs} windows both fired were first fired at another watermark on each side, "
                f"while {s.zero_share:.0%} of the live fire watermarks are watermarks the replay's splits published "
                "(no shift: the same out-of-orderness), so the jobs took the minimum over other splits")
    sil = e.silences
    if sil is not None:
        evidence += (f"; at the replay's firing of {sil.windows} of them a split had been silent "
                     f"{spoken_duration(sil.shortest_ms)} to {spoken_duration(sil.longest_ms)} (median "
                     f"{spoken_duration(sil.median_ms)}; split {sil.split} in {sil.split_windows})")
    evidence += f"; {_late_rows(e)}"
    way = _direction(e)
    shorter = {"ahead": "a shorter", "behind": "a longer"}.get(way or "", "another")
    text = (f"The idle timeout differs: the live job ran with {shorter} idle timeout than the replay's "
            f"{fmt_duration(mine) if mine else 'none'}")
    if way == "ahead" and sil is not None:
        text += f", below the silences it idled in (under {spoken_duration(sil.shortest_ms)})"
    confidence = HIGH if s.zero_share >= 0.98 and other >= 3 else MEDIUM
    also = None
    if way != "ahead" and cfg.watermark.emit == "periodic":
        # Flink's idleness timer starts at a periodic emit, so a longer interval moves the idleness too: the same
        # split values, taken later, at other minimums. Only replays tell them apart (settings_search.py).
        also, confidence = "emission_interval", MEDIUM
        text += (f"; or a longer watermark emission interval than the replay's "
                 f"{fmt_duration(cfg.watermark.interval_ms)} (windows fire at its next tick, and idleness is "
                 "checked at a tick): the fire watermarks cannot tell these two apart, an idle timeout that makes "
                 "the replay agree can (the settings search)")
    if e.split_not_read:
        confidence = MEDIUM
        text += (f"; or it never read split {e.split_not_read} (its own hint): a split left out of the minimum looks "
                 "the same, and the outputs cannot tell these two apart")
    return [_cause("idle_timeout", confidence, evidence, text + ".", direction=way, also=also,
                   interval_ms=cfg.watermark.interval_ms,
                   bound_ms=None if sil is None else sil.shortest_ms if way == "ahead" else sil.longest_ms)]


def _idle_beside_shift(e: Evidence, cfg: JobConfig) -> list[dict[str, Any]]:
    """With the out-of-orderness shifted, every first firing moves: only the replay's idle spans speak, for the
    differing windows it fired right after a split went idle."""
    mine = cfg.watermark.idle_timeout_ms
    if not mine or not e.near_idle:
        return []
    evidence = (f"{e.near_idle} of the {e.differing} differing windows were fired by the replay right after a split "
                f"went idle (its idle timeout {fmt_duration(mine)}); the out-of-orderness shift hides the "
                "first-firing test")
    return [_cause("idle_timeout", MEDIUM if e.near_idle * 2 >= e.differing else LOW, evidence, (
        f"The idle timeout may differ too: the idle timeout decides those windows, and the outputs cannot say "
        f"whether the live job's is the replay's {fmt_duration(mine)}."), direction=_direction(e), bound_ms=None)]


def allowed_lateness(e: Evidence, cfg: JobConfig) -> list[dict[str, Any]]:
    s = e.shift
    refired = e.refired_replay + e.refired_live
    if s is None or s.pairs == 0 or s.same_first < s.pairs or not (refired or e.late_replay_only
                                                                   or e.late_live_only):
        return []
    mine = cfg.window.allowed_lateness_ms
    way = _direction(e)
    side = "replay" if e.refired_replay >= e.refired_live else "live job"
    dropped = e.late_live_only if side == "replay" else e.late_replay_only
    evidence = (f"all {s.pairs} windows both fired were first fired at the same watermark on both sides (the "
                f"watermarks agree); {refired} windows were fired again (fire index > 0) more often by the {side}, "
                f"which counted {plural(dropped, 'row', 'rows')} the other side dropped as late; {_late_rows(e)}")
    confidence = HIGH if s.pairs >= 10 and refired else MEDIUM
    text = (f"Allowed lateness differs: the live job ran with {'a smaller' if way == 'ahead' else 'a larger'} "
            f"allowed lateness than the replay's {fmt_duration(mine)}")
    seen = e.accepted_lateness_ms if way == "behind" else None
    if seen is not None:
        text += f", above {fmt_duration(seen)} (the latest row it accepted that the replay dropped)"
        evidence += f"; the latest of those rows came {fmt_duration(seen)} after its window's end"
    return [_cause("allowed_lateness", confidence, evidence, text + ".", direction=way, bound_ms=seen)]


def settings_agree(e: Evidence) -> list[dict[str, Any]]:
    s = e.shift
    if s is None or s.pairs == 0 or s.same_first < s.pairs or not e.differing or s.zero_share < 0.9:
        return []
    if e.refired_replay or e.refired_live or e.late_replay_only or e.late_live_only:
        return []
    return [_cause("none", HIGH if s.pairs >= 10 else MEDIUM, (
        f"all {s.pairs} windows both fired were first fired at the same watermark on both sides, no window was "
        "re-fired more often on one side and no row was late on one side only"),
        "The watermark settings agree (out-of-orderness, idle timeout, allowed lateness): the differences are in "
        "the rows the jobs read or in how they aggregate them (the hints below).")]


def direction_only(e: Evidence, cfg: JobConfig) -> list[dict[str, Any]]:
    """Without live fire watermarks: which side's watermark was ahead, and the settings that could do it."""
    way = _direction(e)
    if e.shift is not None or way is None:
        return []
    wm = cfg.watermark
    more = "smaller" if way == "ahead" else "larger"
    return [_cause("watermark", LOW, _late_rows(e) + "; the live output has no fire watermark to test more", (
        f"The live watermark was {way} {'of ' if way == 'ahead' else ''}the replay's: a {more} max out-of-orderness "
        f"(replay: {fmt_duration(wm.max_out_of_orderness_ms)}), a {more} idle timeout (replay: "
        f"{fmt_duration(wm.idle_timeout_ms) if wm.idle_timeout_ms else 'none'}) or a {more} allowed lateness "
        f"(replay: {fmt_duration(cfg.window.allowed_lateness_ms)}); the outputs cannot tell these apart."),
        direction=way)]


def no_constant_shift(e: Evidence, cfg: JobConfig) -> list[dict[str, Any]]:
    """Live fire watermarks the replay's splits never published: another input took part in the live minimum (a
    side input the replay counts at +inf) or the live job computes its watermarks otherwise (per event, another
    strategy). Another emission interval is not it: that keeps every value on the replay's (idle_timeout names it)."""
    s = e.shift
    if s is None or s.found or s.zero_share >= 0.9 or not s.sampled:
        return []
    evidence = (f"no constant puts more than {max(s.shift_share, s.zero_share):.0%} of the {s.sampled} distinct live "
                "fire watermarks onto a watermark the replay's splits published (another emission interval would "
                f"keep all of them there); {_late_rows(e)}")
    side = list(cfg.source.side_inputs)
    way = _direction(e)
    if side and way != "ahead":
        names = ", ".join(side)
        return [_cause("side_input", MEDIUM if way == "behind" else LOW, evidence, (
            f"A side input held the live watermark: the replay counts {names} at +inf (source.side_inputs), the live "
            f"job waited for {'it' if len(side) == 1 else 'them'} (an input that carries event time there, or "
            f"is never idle): its watermark was behind the replay's at the values {names} published. Or the live "
            "job computes its watermarks otherwise (per event, another strategy); the live fire watermarks alone "
            "cannot tell these two apart."), direction=way)]
    return [_cause("emission", LOW, evidence, (
        "The live watermarks are not the replay's split watermarks, shifted or not: the live job computes them "
        "otherwise (per event, another strategy) or another input (a side input, another source) held them."),
        direction=way)]


def diagnose(e: Evidence, cfg: JobConfig) -> list[dict[str, Any]]:
    """The causes the evidence supports, the most certain first."""
    found = (out_of_orderness(e, cfg) + idle_timeout(e, cfg) + allowed_lateness(e, cfg) + settings_agree(e)
             + no_constant_shift(e, cfg) + direction_only(e, cfg))
    rank = {HIGH: 0, MEDIUM: 1, LOW: 2}
    return sorted(found, key=lambda c: rank[c["confidence"]])


def with_causes(causes: list[dict[str, Any]], hints: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The certain causes first, then a split never read or a changed aggregate (their tests are strict), the
    settings agreeing, the other causes, then hints.py's.
    A certain cause supersedes the hints that guess at settings from the direction alone (late rows on one side,
    re-firings, windows fired after a split went idle): its evidence holds their figures, and their guesses
    would point elsewhere."""
    certain = [c for c in causes if c["confidence"] == HIGH and c.get("setting") != "none"]
    agree = [c for c in causes if c.get("setting") == "none"]
    unsure = [c for c in causes if c["confidence"] != HIGH and c.get("setting") != "none"]
    named = [h for h in hints if h["kind"] in ROW_CAUSES]
    rest = [h for h in hints if h["kind"] not in ROW_CAUSES and not ((certain or agree) and h["kind"] in SUPERSEDED)]
    # With the watermark settings agreeing, what differs is in the rows: its hint leads, the agreement follows
    return certain + named + agree + unsure + rest
