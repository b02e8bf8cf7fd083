"""The one typed job config: loaded from YAML, validated before Spark starts (what each key means: docs/semantics.md).

Every error is a `ConfigError` naming the offending key (dotted path) and why.
All durations and instants are held as integer milliseconds.

One module on purpose, over the 300-line mark: it is the reference of the YAML format, every section's
dataclass with its keys, defaults and checks, read top to bottom in the order of a config file; split up, a key's
check would sit apart from its neighbours' that it depends on (window against watermark, range against splits).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Mapping, get_args

import yaml

from .durations import parse_duration_ms, parse_instant_ms

Strategy = Literal["bounded_out_of_orderness", "sql", "monotonous"]
Emit = Literal["periodic", "per_event"]
WindowType = Literal["tumbling", "sliding", "session"]
TimeNotion = Literal["event", "ingestion", "processing"]
EndOfInput = Literal["flush", "hold"]
SourceFormat = Literal["parquet", "csv"]
# The values each accepts, in the order error messages list them.
STRATEGIES: tuple[str, ...] = get_args(Strategy)
EMITS: tuple[str, ...] = get_args(Emit)
WINDOW_TYPES: tuple[str, ...] = get_args(WindowType)
TIME_NOTIONS: tuple[str, ...] = get_args(TimeNotion)
END_OF_INPUT: tuple[str, ...] = get_args(EndOfInput)
FORMATS: tuple[str, ...] = get_args(SourceFormat)
COLUMN_ROLES = ("split", "offset", "arrival_time", "event_time", "key")
DEFAULT_INTERVAL_MS = 200  # Flink's default autoWatermarkInterval


class ConfigWarning(UserWarning):
    """A config key that is accepted but has no effect (named in the message)."""


class ConfigError(ValueError):
    """A config value that cannot be used; `key` is the dotted path of the offending key."""

    def __init__(self, key: str, why: str):
        self.key = key
        self.why = why
        super().__init__(f"config key '{key}': {why}")


@dataclass(frozen=True)
class SourceConfig:
    path: str
    format: SourceFormat = "parquet"
    columns: Mapping[str, str] = field(default_factory=lambda: {r: r for r in COLUMN_ROLES})
    splits: tuple[str, ...] | None = None  # declared splits; None = those seen in the range
    side_inputs: tuple[str, ...] = ()  # inputs that never produce watermarks: count as +inf


@dataclass(frozen=True)
class WatermarkConfig:
    strategy: Strategy = "bounded_out_of_orderness"
    max_out_of_orderness_ms: int = 0
    emit: Emit = "periodic"
    interval_ms: int = DEFAULT_INTERVAL_MS  # 0 when emit == per_event
    idle_timeout_ms: int | None = None
    advance_after_silence_ms: int | None = None

    @property
    def periodic(self) -> bool:
        return self.emit == "periodic"

    def watermark_of(self, max_ts: int) -> int:
        """The strategy's formula (SEMANTICS §2) applied to a max timestamp."""
        return max_ts - self.lag_ms

    @property
    def lag_ms(self) -> int:
        """watermark = max_ts - lag_ms; a fresh generator starts at max_ts = -inf + lag_ms."""
        return {"bounded_out_of_orderness": self.max_out_of_orderness_ms + 1,
                "sql": self.max_out_of_orderness_ms,
                "monotonous": 1}[self.strategy]


@dataclass(frozen=True)
class WindowConfig:
    type: WindowType = "tumbling"
    size_ms: int | None = None
    slide_ms: int | None = None
    offset_ms: int = 0
    gap_ms: int | None = None
    allowed_lateness_ms: int = 0
    time: TimeNotion = "event"


@dataclass(frozen=True)
class ReplayRangeConfig:
    start_ms: int | None = None
    end_ms: int | None = None
    end_of_input: EndOfInput = "flush"


@dataclass(frozen=True)
class OutputConfig:
    path: str
    # Files of the windows output: firings are spread over them by a hash of the key (and sorted in each), so the
    # write uses that many cores; fixed by config, never by the cluster, so the files are the same on any cluster.
    windows_files: int = 1


@dataclass(frozen=True)
class JobConfig:
    source: SourceConfig
    watermark: WatermarkConfig
    window: WindowConfig
    aggregations: Mapping[str, str]
    replay: ReplayRangeConfig
    output: OutputConfig

    def with_end_of_input(self, end_of_input: EndOfInput) -> "JobConfig":
        """The same config ending its input with `end_of_input` (a partition's own, or the command line's)."""
        return replace(self, replay=replace(self.replay, end_of_input=end_of_input))

    def with_overrides(self, **sections: Mapping[str, Any]) -> "JobConfig":
        """A new config with some raw keys replaced, validated as a whole: `watermark={'idle_timeout': '2m'}`."""
        raw = to_raw(self)
        for section, values in sections.items():
            raw.setdefault(section, {}).update(values)
        return parse_config(raw)


_AGG_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED_OUTPUT_COLUMNS = {"key", "window_start", "window_end", "fire_index", "fire_watermark", "fire_reason"}


def _mapping(raw: Any, key: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(key, f"must be a mapping, got {type(raw).__name__}")
    return raw


def _reject_unknown(raw: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
    for k in raw:
        if k not in allowed:
            raise ConfigError(f"{prefix}.{k}" if prefix else str(k), f"unknown key (allowed: {', '.join(sorted(allowed))})")


def _choice(raw: Mapping[str, Any], name: str, choices: tuple[str, ...], default: str | None, prefix: str) -> str:
    value = raw.get(name, default)
    if value is None:
        raise ConfigError(f"{prefix}.{name}", f"is required (one of {', '.join(choices)})")
    if value not in choices:
        raise ConfigError(f"{prefix}.{name}", f"unknown value {value!r} (one of {', '.join(choices)})")
    return value


def _duration(raw: Mapping[str, Any], name: str, prefix: str, *, required: bool = False,
              default: int | None = None, minimum: int = 0, strictly_positive: bool = False) -> int | None:
    key = f"{prefix}.{name}"
    if name not in raw or raw[name] is None:
        if required:
            raise ConfigError(key, "is required (a duration such as 500ms, 5s, 1m or PT5S)")
        return default
    try:
        ms = parse_duration_ms(raw[name])
    except ValueError as exc:
        raise ConfigError(key, str(exc)) from None
    if strictly_positive and ms <= 0:
        raise ConfigError(key, f"must be greater than zero, got {raw[name]!r}")
    if ms < minimum:
        raise ConfigError(key, f"must be at least {minimum} ms, got {raw[name]!r}")
    return ms


def _instant(raw: Mapping[str, Any], name: str, prefix: str) -> int | None:
    if raw.get(name) is None:
        return None
    try:
        return parse_instant_ms(raw[name])
    except ValueError as exc:
        raise ConfigError(f"{prefix}.{name}", str(exc)) from None


def _names(raw: Mapping[str, Any], name: str, prefix: str) -> tuple[str, ...] | None:
    value = raw.get(name)
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (str, int)) and str(v) != "" for v in value):
        raise ConfigError(f"{prefix}.{name}", "must be a list of non-empty split names")
    names = tuple(str(v) for v in value)
    if len(set(names)) != len(names):
        raise ConfigError(f"{prefix}.{name}", "lists a split twice")
    return names


def _parse_source(raw: Mapping[str, Any]) -> SourceConfig:
    p = "source"
    _reject_unknown(raw, {"path", "format", "columns", "splits", "side_inputs"}, p)
    path = raw.get("path")
    if not isinstance(path, str) or not path:
        raise ConfigError(f"{p}.path", "is required (a Parquet or CSV dataset path)")
    fmt = _choice(raw, "format", FORMATS, "parquet", p)
    cols_raw = _mapping(raw.get("columns"), f"{p}.columns")
    _reject_unknown(cols_raw, set(COLUMN_ROLES), f"{p}.columns")
    columns = {}
    for role in COLUMN_ROLES:
        name = cols_raw.get(role, role)
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{p}.columns.{role}", "must be a column name")
        columns[role] = name
    if len(set(columns.values())) != len(columns):
        raise ConfigError(f"{p}.columns", "two roles map to the same column")
    splits = _names(raw, "splits", p)
    side_inputs = _names(raw, "side_inputs", p) or ()
    if splits is not None:
        overlap = set(splits) & set(side_inputs)
        if overlap:
            raise ConfigError(f"{p}.side_inputs", f"{sorted(overlap)} also listed in source.splits")
    return SourceConfig(path=path, format=fmt, columns=columns, splits=splits, side_inputs=side_inputs)


def _parse_watermark(raw: Mapping[str, Any]) -> WatermarkConfig:
    p = "watermark"
    _reject_unknown(raw, {"strategy", "max_out_of_orderness", "emit", "interval", "idle_timeout",
                          "advance_after_silence"}, p)
    strategy = _choice(raw, "strategy", STRATEGIES, "bounded_out_of_orderness", p)
    if strategy == "monotonous":
        delay = _duration(raw, "max_out_of_orderness", p, default=0)
        if delay:
            raise ConfigError(f"{p}.max_out_of_orderness", "must be absent or 0 with strategy monotonous")
    else:
        delay = _duration(raw, "max_out_of_orderness", p, required=True)
    emit = _choice(raw, "emit", EMITS, "periodic", p)
    if emit == "periodic":
        interval = _duration(raw, "interval", p, default=DEFAULT_INTERVAL_MS, strictly_positive=True)
    else:
        interval = _duration(raw, "interval", p, default=0)
        if interval:
            raise ConfigError(f"{p}.interval", "must be absent or 0 with emit per_event (no ticks)")
    idle = _duration(raw, "idle_timeout", p, strictly_positive=True)
    silence = _duration(raw, "advance_after_silence", p)
    if emit == "per_event" and idle is not None:
        raise ConfigError(f"{p}.idle_timeout", "needs emit periodic: idleness is detected at ticks")
    if emit == "per_event" and silence is not None:
        raise ConfigError(f"{p}.advance_after_silence", "needs emit periodic: silence is measured at ticks")
    return WatermarkConfig(strategy=strategy, max_out_of_orderness_ms=delay, emit=emit, interval_ms=interval,
                           idle_timeout_ms=idle, advance_after_silence_ms=silence)


def _parse_window(raw: Mapping[str, Any]) -> WindowConfig:
    p = "window"
    _reject_unknown(raw, {"type", "size", "slide", "offset", "gap", "allowed_lateness", "time"}, p)
    wtype = _choice(raw, "type", WINDOW_TYPES, None, p)
    time = _choice(raw, "time", TIME_NOTIONS, "event", p)
    lateness = _duration(raw, "allowed_lateness", p, default=0)
    size = slide = gap = None
    offset = 0
    if wtype == "session":
        for k in ("size", "slide", "offset"):
            if k in raw:
                raise ConfigError(f"{p}.{k}", "does not apply to session windows (use gap)")
        gap = _duration(raw, "gap", p, required=True, strictly_positive=True)
    else:
        if "gap" in raw:
            raise ConfigError(f"{p}.gap", f"does not apply to {wtype} windows")
        size = _duration(raw, "size", p, required=True, strictly_positive=True)
        offset = _duration(raw, "offset", p, default=0)
        if wtype == "sliding":
            slide = _duration(raw, "slide", p, required=True, strictly_positive=True)
            if slide > size:
                raise ConfigError(f"{p}.slide", f"must not exceed window.size ({slide} ms > {size} ms)")
            if offset >= slide:
                raise ConfigError(f"{p}.offset", "must be smaller than window.slide")
        else:
            if "slide" in raw:
                raise ConfigError(f"{p}.slide", "does not apply to tumbling windows")
            if offset >= size:
                raise ConfigError(f"{p}.offset", "must be smaller than window.size")
    if time == "processing" and lateness:
        raise ConfigError(f"{p}.allowed_lateness", "processing-time windows have no lateness")
    return WindowConfig(type=wtype, size_ms=size, slide_ms=slide, offset_ms=offset, gap_ms=gap,
                        allowed_lateness_ms=lateness, time=time)


_AGG_CALL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*\(")


def _aggregate_syntax_problem(expr: str) -> str | None:
    """The shape errors caught before Spark parses the expression: parentheses (outside quotes) that close before
    they open or never close, an operator dangling at either end, no function call at all."""
    depth, quote = 0, None
    for ch in expr:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return "a parenthesis closes before it opens"
    if depth or quote:
        return "unbalanced parentheses or quotes"
    text = expr.strip()
    if text[0] in "+-*/%,=<>|&" or text[-1] in "+-*/%,=<>|&^!":
        return "an operator without an operand"
    if not _AGG_CALL.search(text):
        return "no aggregate function call (e.g. sum(value))"
    return None


def _parse_aggregations(raw: Any) -> dict[str, str]:
    p = "aggregations"
    aggs = _mapping(raw, p)
    if not aggs:
        raise ConfigError(p, "at least one aggregate is required, e.g. {cnt: count(*)}")
    out = {}
    for name, expr in aggs.items():
        if not isinstance(name, str) or not _AGG_NAME.match(name):
            raise ConfigError(f"{p}.{name}", "output column names are identifiers ([A-Za-z_][A-Za-z0-9_]*)")
        if name in _RESERVED_OUTPUT_COLUMNS:
            raise ConfigError(f"{p}.{name}", "clashes with a column of the windows output")
        if not isinstance(expr, str) or not expr.strip():
            raise ConfigError(f"{p}.{name}", "must be a Spark SQL aggregate expression such as sum(value)")
        problem = _aggregate_syntax_problem(expr)
        if problem:
            raise ConfigError(f"{p}.{name}", f"{problem} in {expr!r}")
        out[name] = expr.strip()
    return out


def _parse_replay(raw: Mapping[str, Any]) -> ReplayRangeConfig:
    p = "replay"
    _reject_unknown(raw, {"start", "end", "end_of_input"}, p)
    start = _instant(raw, "start", p)
    end = _instant(raw, "end", p)
    if start is not None and end is not None and end <= start:
        raise ConfigError(f"{p}.end", "must be after replay.start (the range is [start, end))")
    eoi = _choice(raw, "end_of_input", END_OF_INPUT, "flush", p)
    return ReplayRangeConfig(start_ms=start, end_ms=end, end_of_input=eoi)


# Processing-time windows fire on the replay clock (docs/semantics.md, "Time notions"): no watermark setting
# changes what they compute, so the section is accepted and ignored, with a warning naming each key it holds.
PROCESSING_TIME_WATERMARK = WatermarkConfig(strategy="monotonous", emit="per_event", interval_ms=0)


def _processing_time_watermark(raw: Mapping[str, Any]) -> WatermarkConfig:
    for k in raw:
        warnings.warn(ConfigWarning(f"config key 'watermark.{k}' is ignored with window.time processing: "
                                    "processing-time windows fire on the replay clock, without watermarks"),
                      stacklevel=3)
    return PROCESSING_TIME_WATERMARK


def parse_config(raw: Any) -> JobConfig:
    root = _mapping(raw, "<root>")
    _reject_unknown(root, {"source", "watermark", "window", "aggregations", "replay", "output"}, "")
    for section in ("source", "window", "aggregations", "output"):
        if section not in root:
            raise ConfigError(section, "section is required")
    source = _parse_source(_mapping(root["source"], "source"))
    window = _parse_window(_mapping(root["window"], "window"))
    if window.time == "processing":
        watermark = _processing_time_watermark(_mapping(root.get("watermark"), "watermark"))
    else:
        watermark = _parse_watermark(_mapping(root.get("watermark"), "watermark"))
    aggregations = _parse_aggregations(root["aggregations"])
    replay = _parse_replay(_mapping(root.get("replay"), "replay"))
    out_raw = _mapping(root["output"], "output")
    _reject_unknown(out_raw, {"path", "windows_files"}, "output")
    if not isinstance(out_raw.get("path"), str) or not out_raw.get("path"):
        raise ConfigError("output.path", "is required")
    files = out_raw.get("windows_files", 1)
    if isinstance(files, bool) or not isinstance(files, int) or not 1 <= files <= 4096:
        raise ConfigError("output.windows_files", f"must be an integer from 1 to 4096, got {files!r}")
    return JobConfig(source=source, watermark=watermark, window=window, aggregations=aggregations,
                     replay=replay, output=OutputConfig(path=out_raw["path"], windows_files=files))


def load_config(path: str | Path) -> JobConfig:
    """The config in a YAML file; a missing or unreadable file is a ConfigError on `--config` (exit 2)."""
    if not Path(path).is_file():
        raise ConfigError("--config", f"config file not found: {path}")
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError("--config", f"cannot read {path}: {exc}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError("<file>", f"{path} is not valid YAML: {exc}") from None
    return parse_config(raw)


def to_raw(cfg: JobConfig) -> dict[str, Any]:
    """The YAML-shaped dict of a config (durations in ms), parseable again by `parse_config`."""
    s, w, win, r = cfg.source, cfg.watermark, cfg.window, cfg.replay
    raw: dict[str, Any] = {
        "source": {"path": s.path, "format": s.format, "columns": dict(s.columns)},
        "watermark": {} if win.time == "processing" else
        {"strategy": w.strategy, "max_out_of_orderness": w.max_out_of_orderness_ms, "emit": w.emit,
         "interval": w.interval_ms},
        "window": {"type": win.type, "allowed_lateness": win.allowed_lateness_ms, "time": win.time},
        "aggregations": dict(cfg.aggregations),
        "replay": {"end_of_input": r.end_of_input},
        "output": {"path": cfg.output.path},
    }
    if cfg.output.windows_files != 1:
        raw["output"]["windows_files"] = cfg.output.windows_files
    if s.splits is not None:
        raw["source"]["splits"] = list(s.splits)
    if s.side_inputs:
        raw["source"]["side_inputs"] = list(s.side_inputs)
    if w.idle_timeout_ms is not None:
        raw["watermark"]["idle_timeout"] = w.idle_timeout_ms
    if w.advance_after_silence_ms is not None:
        raw["watermark"]["advance_after_silence"] = w.advance_after_silence_ms
    if win.type == "session":
        raw["window"]["gap"] = win.gap_ms
    else:
        raw["window"]["size"] = win.size_ms
        raw["window"]["offset"] = win.offset_ms
        if win.type == "sliding":
            raw["window"]["slide"] = win.slide_ms
    if r.start_ms is not None:
        raw["replay"]["start"] = r.start_ms
    if r.end_ms is not None:
        raw["replay"]["end"] = r.end_ms
    return raw
