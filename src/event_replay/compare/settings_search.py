"""Letting the settings search decide: the diagnosis's suspects replayed one setting at a time around the replay's
config and ranked against the live output by the calibration (tuning/calibrate.py through tuning/runner.py: the
source read once, each variant matched as `replay compare` matches). A variant that agrees on every window (and
every late row) is the strongest evidence there is, shown first: "with idle timeout 1.5 s the replay agrees on 100%
of windows". Otherwise the best variant is said next to the replay's own agreement.

Candidates: the out-of-orderness the shift names; for the idle timeout and the allowed lateness, the round values
nearest the replay's on the side the evidence points to (below the silences the live job idled in, when known;
about 3 and 6 times the replay's when nothing bounds it). When no single setting agrees fully, the other suspects
are tried on top of the best one (two settings changed). Variants already replayed and ranked (the calibration
grid of the DAG's compare task) are ranked with them and never replayed again: one of them agreeing fully confirms
two settings at once. At most MAX_REPLAYS replays. The replays and their ranking are the caller's (`Ranker`:
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
Ranker = Callable[[JobConfig, Sequence["Settings"]], list[dict[str, Any]]]

MAX_VARIANTS = 6  # candidates of one step
MAX_REPLAYS = 9  # replays of a whole search (each a full replay of the range)
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
    if bound is None and mine:  # nothing bounds it: the next value, then about 3 and 6 times the replay's
        return list(dict.fromkeys(near[:1] + [v for v in near if v >= 3 * mine][:1]
                                  + [v for v in near if v >= 6 * mine][:1]))
    return list(dict.fromkeys(near[:2] + past[:1]))


def _nearest(ladder: Sequence[int], mine: int | None, way: str | None, bound: int | None,
             strict: bool = False) -> list[int]:
    if way == "ahead":
        return _below(ladder, mine, bound)[:PER_SETTING]
    if way == "behind":
        return _above(ladder, mine, bound, strict)
    return _below(ladder, mine, None)[:1] + _above(ladder, mine, None, False)[:3]


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


Settings = tuple[int, "int | None", int]  # (max out-of-orderness, idle timeout, allowed lateness)
KEYS = ("max_out_of_orderness", "idle_timeout", "allowed_lateness")
FLAVOURED = {"watermark_flavour": "max_out_of_orderness"}  # the causes whose candidates are another setting's


def settings_of(cfg: JobConfig, setting: str, value: int | None) -> Settings:
    """(max out-of-orderness, idle timeout, allowed lateness) of the replay's config with one setting changed."""
    values = dict(zip(KEYS, own_settings(cfg)))
    values[setting] = value
    return values["max_out_of_orderness"], values["idle_timeout"], values["allowed_lateness"]


def own_settings(cfg: JobConfig) -> Settings:
    return cfg.watermark.max_out_of_orderness_ms, cfg.watermark.idle_timeout_ms, cfg.window.allowed_lateness_ms


def with_settings(cfg: JobConfig, settings: Settings) -> JobConfig:
    """The config with these three settings (the base of the search's second step)."""
    delay, idle, lateness = settings
    wm = {k: v for k, v, mine in (("max_out_of_orderness", delay, cfg.watermark.max_out_of_orderness_ms),
                                  ("idle_timeout", idle, cfg.watermark.idle_timeout_ms)) if v != mine}
    lateness_change = {"allowed_lateness": lateness} if lateness != cfg.window.allowed_lateness_ms else {}
    return cfg.with_overrides(watermark=wm, window=lateness_change)


def _words(setting: str, value: int | None) -> str:
    return f"{SETTING_WORDS[setting]} {spoken_duration(value) if value is not None else 'none'}"


def _row(cfg: JobConfig, settings: Settings, scored: dict[str, Any]) -> dict[str, Any]:
    """A ranked variant as the search keeps it: the settings it changed from the replay's, in words."""
    changed = [(k, v) for k, v, mine in zip(KEYS, settings, own_settings(cfg)) if v != mine]
    return {**scored, "settings": settings, "setting": "+".join(k for k, _ in changed) or "none",
            "value_ms": changed[0][1] if len(changed) == 1 else None,
            "values_ms": {k: v for k, v in changed},
            "change": " and ".join(_words(k, v) for k, v in changed) or "the replay's own settings"}


def _settings_of_row(r: dict[str, Any]) -> Settings:
    return r["max_out_of_orderness_ms"], r["idle_timeout_ms"], r["allowed_lateness_ms"]


def search(cfg: JobConfig, causes: list[dict[str, Any]], rank: Ranker, known: Sequence[dict[str, Any]] = (),
           own_pct: float | None = None) -> dict[str, Any] | None:
    """The ranking of the candidates (calibrate's columns, best first) and the hint it gives; None: no candidate.
    `rank(cfg, settings)`: each (delay, idle, lateness) replayed and scored against the live output, in order;
    `known`: variants already replayed and scored (a calibration grid's rows, calibrate's columns): ranked with
    the rest and never replayed again; `own_pct`: the replay's own agreement.
    The certain causes' candidates are replayed first; the others only when those do not agree fully. When none
    does and the best one agrees more than the replay, the other causes' candidates are tried on top of it (two
    settings may differ: the demo's live job ran with another out-of-orderness and another idle timeout)."""
    rows = [_row(cfg, _settings_of_row(r), r) for r in known]
    tried = {r["settings"] for r in rows}
    replays = 0

    def run(base: JobConfig, pairs: Sequence[tuple[str, int | None]]) -> None:
        nonlocal replays
        todo = list(dict.fromkeys(s for s in (settings_of(base, k, v) for k, v in pairs) if s not in tried))
        todo = todo[:MAX_REPLAYS - replays]
        if todo:
            rows.extend(_row(cfg, st, r) for st, r in zip(todo, rank(cfg, todo)))
            tried.update(todo)
            replays += len(todo)

    certain = candidates([c for c in causes if c["confidence"] == "high"], cfg)
    every = candidates(causes, cfg)
    for pairs in ([certain, [p for p in every if p not in certain]] if certain else [every]):
        if any(_agrees(r) for r in rows):
            break
        run(cfg, pairs)
    best = max(rows, key=_key, default=None)
    if best is not None and not _agrees(best) and (best.get("live_agreement_pct") or 0) > (own_pct or 0):
        base = with_settings(cfg, best["settings"])
        # their direction was read against the replay's own settings, not the best's: both sides are tried
        others = [{**c, "direction": None, "bound_ms": None} for c in causes
                  if FLAVOURED.get(c["setting"], c["setting"]) not in best["values_ms"]]
        run(base, [p for p in candidates(others, base) if p[0] not in best["values_ms"]])
    if not rows:
        return None
    ranked = _ranked(rows)
    return {"rows": ranked, "hint": _hint(ranked, replays, len(known))}


def _agrees(r: dict[str, Any]) -> bool:
    late = r.get("live_late_union")
    return r.get("live_agreement_pct") == 100.0 and (late is None or r.get("live_late_matched") == late)


def _key(r: dict[str, Any]) -> tuple:
    """The calibration's measure: score, then fire watermarks matched."""
    return r.get("live_score") or 0, r.get("live_watermarks_matched") or 0


def _ranked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Best first across the stages; equal ones share a rank (the fewest settings changed first among them)."""
    for r in rows:
        r["live_rank"] = 1 + sum(_key(o) > _key(r) for o in rows)
    return sorted(rows, key=lambda r: (r["live_rank"], len(r["values_ms"])))


def _hint(ranked: list[dict[str, Any]], replays: int, known: int) -> dict[str, Any]:
    best = ranked[0]
    ties = [r for r in ranked if r.get("live_rank") == 1]
    late = best.get("live_late_union")
    grid = f", and the calibration grid's {plural(known, 'variant', 'variants')}" if known else ""
    pairs = ", then a second on top of the closest" if any(len(r["values_ms"]) > 1 for r in ranked) else ""
    how = (f"the settings search (one setting at a time around the replay's config{pairs}, "
           f"{plural(replays, 'replay', 'replays')}{grid})")
    if _agrees(best):
        named = " or ".join(r["change"] for r in ties)
        also = [r["change"] for r in ranked if r not in ties and _agrees(r)]
        late_text = "" if late is None else f" and every late row ({late})"
        text = (f"With {named} the replay agrees on 100% of windows ({best['live_windows']}){late_text}: {how} "
                "confirms the cause" + (" (the variants tie: the output cannot tell them apart)" if len(ties) > 1
                                        else "")
                + (f"; so do {', '.join(also)}, whose firings agree at fewer watermarks." if also else "."))
        return {"kind": "search", "setting": best["setting"], "value_ms": best["value_ms"],
                "values_ms": best["values_ms"], "confidence": "confirmed", "windows": best["live_windows"],
                "text": text}
    text = (f"No single setting makes the replay agree fully: {how}; the closest is {best['change']}, agreeing on "
            f"{pct(best['live_agreement_pct'])} of windows. More than one setting may differ (the causes above).")
    return {"kind": "search", "setting": best["setting"], "value_ms": best["value_ms"],
            "values_ms": best["values_ms"], "confidence": "partial", "windows": best["live_windows"], "text": text}


def with_search(hints: list[dict[str, Any]], found: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A full agreement goes first; a partial one after the causes it tried."""
    if found is None:
        return hints
    hint = found["hint"]
    causes = [h for h in hints if h["kind"] == "cause"]
    if hint["confidence"] == "confirmed":
        return [_or_interval(hint, causes)] + hints
    interval = _interval_decided(causes, found["rows"])
    return interval + causes + [hint] + hints[len(causes):]


def _or_interval(hint: dict[str, Any], causes: list[dict[str, Any]]) -> dict[str, Any]:
    """An idle timeout that agrees fully, where the idle cause was named with a longer emission interval: the
    interval can give the very same firings (Flink checks idleness at its ticks), and no replay here changes the
    interval, so both are named."""
    idle = next((c for c in causes if c.get("setting") == "idle_timeout" and c.get("also") == "emission_interval"),
                None)
    if idle is None or hint["setting"] != "idle_timeout":
        return hint
    return {**hint, "also": "emission_interval", "text": hint["text"].rstrip(".") + (
        f"; or the live job's watermark emission interval is longer than the replay's "
        f"{spoken_duration(idle['interval_ms'])}, which can give the same firings (idleness is checked at its "
        "ticks): the outputs cannot tell these two apart, the live job's pipeline.auto-watermark-interval can.")}


def _interval_decided(causes: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The idle timeout named with a longer emission interval (diagnosis.idle_timeout), and no idle timeout the
    search replayed agrees fully: the emission interval leads (the search cannot replay another interval)."""
    idle = next((c for c in causes if c.get("setting") == "idle_timeout" and c.get("also") == "emission_interval"),
                None)
    tried = [r for r in rows if r["setting"] == "idle_timeout"]
    if idle is None or not tried or any(_agrees(r) for r in tried):
        return []
    best = max(tried, key=_key)
    values = ", ".join(_words("idle_timeout", r["value_ms"]).split(" ", 2)[2] for r in tried)
    evidence = (f"the live job fired windows later at the replay's own split watermarks (no shift: the idle "
                f"timeout's evidence below), yet no idle timeout makes the replay agree: the settings search "
                f"replayed idle timeouts {values}, the closest ({best['change']}) agreeing on "
                f"{pct(best['live_agreement_pct'])} of windows")
    text = (f"The watermark emission interval differs: the live job published its watermark less often than the "
            f"replay's every {spoken_duration(idle['interval_ms'])} (pipeline.auto-watermark-interval), so it fired "
            "windows at a later tick of its own.")
    return [{"kind": "cause", "setting": "emission_interval", "confidence": "medium", "evidence": evidence,
             "text": f"{text} Evidence: {evidence} (confidence: medium)."}]
