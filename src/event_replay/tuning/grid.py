"""The what-if grid: lists of watermark settings, parsed and validated before Spark starts.

`--max-out-of-orderness 1s,5s,30s --idle-timeout none,30s,2m [--allowed-lateness 0,2s]` is the product of the
three lists; an option left out keeps the config's own value. Every error is a `GridError` naming the option.
Values are parsed with the config's duration parser and each variant's config is built with
`JobConfig.with_overrides`, so a value the config would refuse (a zero idle timeout, a delay with strategy
monotonous, ...) is refused here, before any Spark job, naming the option.

Variants are deduplicated by value and sorted (delay, then idle timeout with `none` first, then lateness), so the
table and the result folder do not depend on the order in which the lists were written.
"""
from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..semantics.config import JobConfig
from ..semantics.config_keys import ConfigError
from ..semantics.durations import format_duration, parse_duration_ms

OPTION_OF_FIELD = {"max_out_of_orderness": "--max-out-of-orderness", "idle_timeout": "--idle-timeout",
                   "allowed_lateness": "--allowed-lateness"}
OPTION_OF_CONFIG_KEY = {"watermark.max_out_of_orderness": "--max-out-of-orderness",
                        "watermark.idle_timeout": "--idle-timeout", "window.allowed_lateness": "--allowed-lateness"}
NONE_WORD = "none"
MAX_VARIANTS = 64  # each variant is a full replay: a bigger grid is almost certainly a typo


class GridError(ValueError):
    """A grid value that cannot be used; `option` is the command-line option (or DAG param) to fix."""

    def __init__(self, option: str, why: str):
        self.option = option
        self.why = why
        super().__init__(f"option {option}: {why}")  # the CLI's refusal line


def grid_value(ms: int | None) -> str:
    """A grid value as written: the shortest exact duration (500ms, 5s, 2m, 1h, 1d); `none` for no idleness."""
    return NONE_WORD if ms is None else format_duration(ms)


def parse_list(text: str | Sequence[str] | None, option: str, *, allow_none: bool) -> tuple[int | None, ...] | None:
    """`"1s,5s,30s"` (or a list of such items) -> sorted distinct ms values; `none` only where `allow_none`.
    None or an empty text -> None (the config's value is kept)."""
    if text is None:
        return None
    items = [text] if isinstance(text, str) else list(text)
    parts = [p.strip() for item in items for p in str(item).split(",")]
    if all(p == "" for p in parts):
        return None
    values: set[int | None] = set()
    for p in parts:
        if p == "":
            raise GridError(option, f"empty item in {text!r} (write e.g. 1s,5s,30s)")
        if p.lower() == NONE_WORD:
            if not allow_none:
                raise GridError(option, "'none' is only allowed for --idle-timeout (no idleness)")
            values.add(None)
            continue
        try:
            ms = int(p) if p.isdigit() else parse_duration_ms(p)  # a bare integer is ms, as in the config
        except ValueError as exc:
            raise GridError(option, str(exc)) from None
        if ms < 0:
            raise GridError(option, f"must not be negative, got {p!r}")
        values.add(ms)
    return tuple(sorted(values, key=lambda v: (v is not None, v or 0)))


@dataclass(frozen=True, order=True)
class Variant:
    max_out_of_orderness_ms: int
    idle_sort: tuple[bool, int]  # (has idleness, timeout): `none` sorts first
    allowed_lateness_ms: int

    @staticmethod
    def of(delay_ms: int, idle_ms: int | None, lateness_ms: int) -> "Variant":
        return Variant(delay_ms, (idle_ms is not None, idle_ms or 0), lateness_ms)

    @property
    def idle_timeout_ms(self) -> int | None:
        return self.idle_sort[1] if self.idle_sort[0] else None

    @property
    def name(self) -> str:
        return (f"delay {grid_value(self.max_out_of_orderness_ms)}, idle {grid_value(self.idle_timeout_ms)}, "
                f"lateness {grid_value(self.allowed_lateness_ms)}")

    def config(self, base: JobConfig) -> JobConfig:
        """The base config with this variant's three settings, validated as a whole."""
        watermark = {"idle_timeout": self.idle_timeout_ms}
        if base.watermark.strategy != "monotonous" or self.max_out_of_orderness_ms:
            watermark["max_out_of_orderness"] = self.max_out_of_orderness_ms
        return base.with_overrides(watermark=watermark, window={"allowed_lateness": self.allowed_lateness_ms})


@dataclass(frozen=True)
class Grid:
    delays_ms: tuple[int, ...]
    idle_timeouts_ms: tuple[int | None, ...]
    lateness_ms: tuple[int, ...]

    @property
    def variants(self) -> list[Variant]:
        return sorted(Variant.of(d, i, lat) for d, i, lat in
                      itertools.product(self.delays_ms, self.idle_timeouts_ms, self.lateness_ms))

    @property
    def name(self) -> str:
        """A stable folder name (no timestamp): the same grid always writes to the same folder."""
        def part(values: Iterable[int | None]) -> str:
            return "-".join(grid_value(v) for v in values)
        name = (f"delay_{part(self.delays_ms)}__idle_{part(self.idle_timeouts_ms)}"
                f"__lateness_{part(self.lateness_ms)}")
        if len(name) > 120:  # keep paths short; the full grid is in tuning.json
            name = name[:100] + "__" + hashlib.sha1(name.encode()).hexdigest()[:12]
        return name


def parse_grid(base: JobConfig, max_out_of_orderness: str | Sequence[str] | None = None,
               idle_timeout: str | Sequence[str] | None = None,
               allowed_lateness: str | Sequence[str] | None = None,
               options: dict[str, str] | None = None) -> tuple[Grid, list[tuple[Variant, JobConfig]]]:
    """The grid and every variant's validated config. `options` renames the options in errors (e.g. the DAG's
    `params.idle_timeout`)."""
    names = {**OPTION_OF_FIELD, **(options or {})}
    delays = parse_list(max_out_of_orderness, names["max_out_of_orderness"], allow_none=False)
    idles = parse_list(idle_timeout, names["idle_timeout"], allow_none=True)
    lateness = parse_list(allowed_lateness, names["allowed_lateness"], allow_none=False)
    grid = Grid(delays_ms=delays or (base.watermark.max_out_of_orderness_ms,),
                idle_timeouts_ms=idles or (base.watermark.idle_timeout_ms,),
                lateness_ms=lateness or (base.window.allowed_lateness_ms,))
    variants = grid.variants
    if len(variants) > MAX_VARIANTS:
        raise GridError(f"{names['max_out_of_orderness']} x {names['idle_timeout']} x {names['allowed_lateness']}",
                        f"{len(variants)} variants; at most {MAX_VARIANTS} (each is a full replay)")
    configs = []
    for v in variants:
        try:
            configs.append((v, v.config(base)))
        except ConfigError as exc:
            option = {k: names[f] for k, f in (("watermark.max_out_of_orderness", "max_out_of_orderness"),
                                                ("watermark.idle_timeout", "idle_timeout"),
                                                ("window.allowed_lateness", "allowed_lateness"))}.get(exc.key)
            if option is None:
                raise
            raise GridError(option, f"variant '{v.name}': config key '{exc.key}': {exc.why}") from None
    return grid, configs
