"""Letting the settings search decide: the diagnosis's suspects replayed one setting at a time around the replay's
config and ranked against the live output by the calibration (tuning/calibrate.py through tuning/runner.py: the
source read once, each variant matched as `replay compare` matches). A variant that agrees on every window (and
every late row) is the strongest evidence there is, shown first: "with idle timeout 1.5 s the replay agrees on 100%
of windows". Otherwise the best variant is said next to the replay's own agreement.

Candidates: the out-of-orderness the shift names; for the idle timeout and the allowed lateness, the round values
nearest the replay's on the side the evidence points to (below the silences the live job idled in, when known).
At most MAX_VARIANTS variants (each is a full replay). The replays and their ranking are the caller's (`Ranker`:
tuning/ sits above this package); the comparison keeps the ranking (summary.json's `search`).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..history.partitions import Partition
from ..semantics.config import JobConfig
from ..semantics.durations import spoken_duration
from .replay_side import Scope
from .summary import pct
from .wording import plural

# (the config, the variants' (delay, idle timeout, lateness)) -> their rows, in order, with calibrate's columns and
# live_rank (commands/compare.py runs them through tuning/: above this package)
Ranker = Callable[[JobConfig, Sequence[tuple[int, "int | None", int]]], list[dict[str, Any]]]

MAX_VARIANTS = 6
PER_SETTING = 3
IDLE_LADDER = (500, 1000, 1500, 2000, 3000, 4000, 5000, 6000, 8000, 10_000, 15_000, 20_000, 30_000, 45_000, 60_000,
               120_000, 300_000, 600_000)
LATENESS_LADDER = (0, 100, 200, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000, 300_000)
SETTING_WORDS = {"max_out_of_orderness": "max out-of-orderness", "idle_timeout": "idle timeout",
                 "allowed_lateness": "allowed lateness"}


def scoped_config(cfg: JobConfig, scope: Scope) -> JobConfig:
    """The config whose replay range is the compared partitions' (what a partition-by-partition replay of them
    replayed: from the first one's start to the last one's end)."""
    if scope.first is None:
        return cfg
    return cfg.with_overrides(replay={"start": Partition.parse(scope.first).start_ms,
                                      "end": Partition.parse(scope.last).end_ms})


def _below(ladder: Sequence[int], mine: int | None, bound: int | None) -> list[int]:
    top = min(v for v in (mine, bound) if v is not None) if (mine, bound) != (None, None) else None
    return [v for v in ladder if top is None or v < top][::-1]


def _above(ladder: Sequence[int], mine: int | None, bound: int | None, strict: bool) -> list[int]:
    """Above the replay's value: past a strict bound (the largest lateness the live job accepted) the two values
    just above it; else two just above the replay's and one above the bound (a silence the live job did not go
    idle in, or went idle later in)."""
    near = [v for v in ladder if mine is None or v > mine]
    past = [v for v in near if bound is not None and v > bound]
    if strict and bound is not None:
        return past[:2]
    return list(dict.fromkeys(near[:2] + past[:1]))


def _nearest(ladder: Sequence[int], mine: int | None, way: str | None, bound: int | None,
             strict: bool = False) -> list[int]:
    if way == "ahead":
        return _below(ladder, mine, bound)[:PER_SETTING]
    if way == "behind":
        return _above(ladder, mine, bound, strict)
    return _below(ladder, mine, None)[:2] + _above(ladder, mine, None, False)[:2]


def candidates(causes: list[dict[str, Any]], cfg: JobConfig) -> list[tuple[str, int | None]]:
    """(setting, value) pairs to try, the most certain cause's first, at most MAX_VARIANTS."""
    out: list[tuple[str, int | None]] = []
    wm = cfg.watermark
    sure = [c for c in causes if c["confidence"] != "low"]
    for c in sure or causes:  # a guess is tried only when nothing surer is named
        setting, way = c["setting"], c.get("direction")
        if setting in ("max_out_of_orderness", "watermark_flavour"):
            out += [("max_out_of_orderness", v) for v in (c.get("candidates") or {}).get("max_out_of_orderness", [])]
        if setting in ("idle_timeout", "watermark"):
            idle = _nearest(IDLE_LADDER, wm.idle_timeout_ms, way, c.get("bound_ms"))
            out += [("idle_timeout", v) for v in idle + ([None] if way == "behind" and wm.idle_timeout_ms else [])]
        if setting in ("allowed_lateness", "watermark"):
            lateness = _nearest(LATENESS_LADDER, cfg.window.allowed_lateness_ms, way, c.get("bound_ms"), strict=True)
            zero = [0] if way == "ahead" and cfg.window.allowed_lateness_ms else []  # no lateness: the default
            out += [("allowed_lateness", v) for v in zero + lateness]
    seen: list[tuple[str, int | None]] = []
    for pair in out:
        if pair not in seen:
            seen.append(pair)
    return seen[:MAX_VARIANTS]


def settings_of(cfg: JobConfig, setting: str, value: int | None) -> tuple[int, int | None, int]:
    """(max out-of-orderness, idle timeout, allowed lateness) of the replay's config with one setting changed."""
    values = {"max_out_of_orderness": cfg.watermark.max_out_of_orderness_ms,
              "idle_timeout": cfg.watermark.idle_timeout_ms, "allowed_lateness": cfg.window.allowed_lateness_ms}
    values[setting] = value
    return values["max_out_of_orderness"], values["idle_timeout"], values["allowed_lateness"]


def _words(setting: str, value: int | None) -> str:
    return f"{SETTING_WORDS[setting]} {spoken_duration(value) if value is not None else 'none'}"


def search(cfg: JobConfig, causes: list[dict[str, Any]], rank: Ranker) -> dict[str, Any] | None:
    """The ranking of the candidates (calibrate's columns, best first) and the hint it gives; None: no candidate.
    `rank(cfg, settings)`: each (delay, idle, lateness) replayed and scored against the live output, in order.
    The certain causes' candidates are replayed first; the others only when those do not agree fully."""
    certain = candidates([c for c in causes if c["confidence"] == "high"], cfg)
    every = candidates(causes, cfg)
    stages = [certain, [p for p in every if p not in certain]] if certain else [every]
    rows: list[dict[str, Any]] = []
    for pairs in (p for p in stages if p):
        scored = rank(cfg, [settings_of(cfg, s, v) for s, v in pairs])
        rows += [{**r, "setting": s, "value_ms": v, "change": _words(s, v)} for (s, v), r in zip(pairs, scored)]
        if any(_agrees(r) for r in rows):
            break
    if not rows:
        return None
    ranked = _ranked(rows)
    return {"rows": ranked, "hint": _hint(ranked, len(rows))}


def _agrees(r: dict[str, Any]) -> bool:
    late = r.get("live_late_union")
    return r.get("live_agreement_pct") == 100.0 and (late is None or r.get("live_late_matched") == late)


def _ranked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Best first across the stages, by the calibration's measure (score, then fire watermarks matched); equal
    ones share a rank."""
    def key(r: dict[str, Any]) -> tuple:
        return r.get("live_score") or 0, r.get("live_watermarks_matched") or 0
    for r in rows:
        r["live_rank"] = 1 + sum(key(o) > key(r) for o in rows)
    return sorted(rows, key=lambda r: r["live_rank"])


def _hint(ranked: list[dict[str, Any]], tried: int) -> dict[str, Any]:
    best = ranked[0]
    ties = [r for r in ranked if r.get("live_rank") == 1]
    late = best.get("live_late_union")
    how = f"the settings search (one setting at a time around the replay's config, {plural(tried, 'variant', 'variants')})"
    if _agrees(best):
        named = " or ".join(r["change"] for r in ties)
        also = [r["change"] for r in ranked if r not in ties and _agrees(r)]
        late_text = "" if late is None else f" and every late row ({late})"
        text = (f"With {named} the replay agrees on 100% of windows ({best['live_windows']}){late_text}: {how} "
                "confirms the cause" + (" (the variants tie: the output cannot tell them apart)" if len(ties) > 1
                                        else "")
                + (f"; so do {', '.join(also)}, whose firings agree at fewer watermarks." if also else "."))
        return {"kind": "search", "setting": best["setting"], "value_ms": best["value_ms"], "confidence": "confirmed",
                "windows": best["live_windows"], "text": text}
    text = (f"No single setting makes the replay agree fully: {how}; the closest is {best['change']}, agreeing on "
            f"{pct(best['live_agreement_pct'])} of windows. More than one setting may differ (the causes above).")
    return {"kind": "search", "setting": best["setting"], "value_ms": best["value_ms"], "confidence": "partial",
            "windows": best["live_windows"], "text": text}


def with_search(hints: list[dict[str, Any]], found: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A full agreement goes first; a partial one after the causes it tried."""
    if found is None:
        return hints
    hint = found["hint"]
    if hint["confidence"] == "confirmed":
        return [hint] + hints
    causes = [h for h in hints if h["kind"] == "cause"]
    return causes + [hint] + hints[len(causes):]
