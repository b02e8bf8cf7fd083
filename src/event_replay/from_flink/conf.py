"""A DataStream job's replay config: `replay config from-flink-conf FILE` (YAML, nested or flat, or .properties).

A DataStream job's watermarks and windows are Java calls, not configuration; this file writes their arguments
down under keys named after the calls (docs/flink_settings.md):

    pipeline.auto-watermark-interval  ExecutionConfig#setAutoWatermarkInterval (Flink's own key; default 200 ms)
    watermark.strategy                forBoundedOutOfOrderness (default) | forMonotonousTimestamps
    watermark.out-of-orderness        the Duration of WatermarkStrategy.forBoundedOutOfOrderness(d): max - d - 1
    watermark.idleness                WatermarkStrategy#withIdleness(d)
    watermark.timestamp-column        the field the TimestampAssigner reads (default event_time)
    window.key-by                     DataStream#keyBy(field) (default key)
    window.assigner                   TumblingEventTimeWindows | SlidingEventTimeWindows | EventTimeSessionWindows
    window.size / window.slide / window.offset   TumblingEventTimeWindows.of(size, offset),
                                      SlidingEventTimeWindows.of(size, slide, offset)
    window.gap                        EventTimeSessionWindows.withGap(gap)
    window.allowed-lateness           WindowedStream#allowedLateness(d) (default 0)
    aggregations.<name>               the window function's output field <name>, as a Spark SQL aggregate

Durations are Flink's (`5 s`, `200ms`, `1 min`, a bare number of ms, `PT5S`). Flink's own keys are read too:
`execution.runtime-mode` (streaming; batch refused: no watermarks), `pipeline.time-characteristic` (EventTime;
the others refused), and the keys that do not change what the windows compute (parallelism, checkpointing, state
backend, cluster settings: settings.no_effect), listed in the generated config's header. Any other key is refused,
and so is a key given twice (in one file, or nested and flat) or without a value, so that a setting the replay would
ignore is never silently dropped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..semantics.config import JobConfig
from ..semantics.durations import format_duration
from .settings import SPLITS_COMMENT, Derived, FlinkSettingsError, flink_duration_ms, no_effect, render

STRATEGIES = {"forBoundedOutOfOrderness": "bounded_out_of_orderness", "forMonotonousTimestamps": "monotonous"}
ASSIGNERS = {"TumblingEventTimeWindows": "tumbling", "SlidingEventTimeWindows": "sliding",
             "EventTimeSessionWindows": "session"}
CALLS = {  # key -> the Flink call it stands for (the YAML comments)
    "pipeline.auto-watermark-interval": "ExecutionConfig#setAutoWatermarkInterval",
    "watermark.strategy": "WatermarkStrategy.{value}",
    "watermark.out-of-orderness": "WatermarkStrategy.forBoundedOutOfOrderness(Duration): max - d - 1",
    "watermark.idleness": "WatermarkStrategy#withIdleness(Duration)",
    "watermark.timestamp-column": "the field of the TimestampAssigner",
    "window.key-by": "DataStream#keyBy",
    "window.assigner": "{value}",
    "window.size": "{assigner}.of(size, ...)",
    "window.slide": "SlidingEventTimeWindows.of(size, slide, ...)",
    "window.offset": "{assigner}.of(..., offset) (modulo the slide: same windows)",
    "window.gap": "EventTimeSessionWindows.withGap(gap)",
    "window.allowed-lateness": "WindowedStream#allowedLateness(Duration)",
}


class _LineLoader(yaml.SafeLoader):
    """A YAML loader whose mappings keep each key's line and refuse a key written twice."""


def _mapping_with_lines(loader: _LineLoader, node: yaml.MappingNode) -> dict:
    out: dict = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in out:
            raise FlinkSettingsError(f"key '{key}'", "given twice: Flink would keep one of them silently",
                                     key_node.start_mark.line + 1)
        out[key] = (loader.construct_object(value_node, deep=True), key_node.start_mark.line + 1)
    return out


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_with_lines)


def read_settings(path: str | Path) -> dict[str, tuple[Any, int | None]]:
    """key -> (value, line): flat keys of a .properties file or of a YAML file (nested keys joined)."""
    path = Path(path)
    text = path.read_text()
    if path.suffix.lower() == ".properties":
        return _properties(text)
    try:
        raw = yaml.load(text, Loader=_LineLoader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as exc:
        raise FlinkSettingsError(str(path), f"not valid YAML: {exc}".splitlines()[0]) from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise FlinkSettingsError(str(path), "must be a mapping of Flink settings")
    return _flatten(raw, "")


def _flatten(raw: dict, prefix: str) -> dict[str, tuple[Any, int]]:
    out: dict[str, tuple[Any, int]] = {}
    for k, (v, line) in raw.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and not (key.startswith("aggregations.") and key.count(".") >= 1):
            items = _flatten(v, f"{key}.")
        elif isinstance(v, dict):
            raise FlinkSettingsError(f"key '{key}'", "a mapping: an aggregation is one Spark SQL expression", line)
        else:
            items = {key: (v, line)}
        for name, value in items.items():
            if name in out:
                raise FlinkSettingsError(f"key '{name}'", f"given twice (also on line {out[name][1]}): Flink would "
                                         "keep one of them silently", value[1])
            out[name] = value
    return out


def _properties(text: str) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s[0] in "#!":
            continue
        cut = min((i for i in (s.find("="), s.find(":")) if i > 0), default=-1)
        if cut < 0:
            raise FlinkSettingsError(s, "expected `key = value`", n)
        key = s[:cut].strip()
        if key in out:
            raise FlinkSettingsError(f"key '{key}'", f"given twice (also on line {out[key][1]}): Flink would keep "
                                     "the last one silently", n)
        out[key] = (s[cut + 1:].strip(), n)
    return out


def config_from_flink_conf(path: str | Path, *, source_path: str, output_path: str,
                           splits: list[str] | None = None) -> tuple[str, JobConfig]:
    settings = read_settings(path)
    d = Derived(origin=f"generated by `replay config from-flink-conf {Path(path).name}`: the replay of the "
                       "DataStream job's settings")
    known = set(CALLS)
    for key, (value, line) in list(settings.items()):
        if value is None or (isinstance(value, str) and not value.strip()):
            raise FlinkSettingsError(f"key '{key}'", "has no value", line)
        if key in known or (key.startswith("aggregations.") and key.count(".") == 1):
            continue
        if key in FLINK_KEYS:
            FLINK_KEYS[key](str(value).strip(), line)
            d.notes.append(f"{key} = {value}{_at(line)}: {FLINK_KEYS_READ[key]}")
            settings.pop(key)
        elif no_effect(key):
            d.notes.append(f"{key} = {value}{_at(line)}: {no_effect(key)}")
            settings.pop(key)
        else:
            raise FlinkSettingsError(f"key '{key}'", f"unknown: it may change what the job computes, so it is not "
                                     f"ignored (keys: {', '.join(sorted(known))}, aggregations.<name>, and Flink's "
                                     "keys listed in docs/flink_settings.md)", line)
    get = _getter(settings)
    d.set("source.path", source_path, "--source-path")
    if splits:
        d.set("source.splits", list(splits), SPLITS_COMMENT)
    d.set("source.columns.event_time", str(get("watermark.timestamp-column", "event_time")),
          _comment(settings, "watermark.timestamp-column"))
    d.set("source.columns.key", str(get("window.key-by", "key")), _comment(settings, "window.key-by"))
    _watermark(d, settings, get)
    _window(d, settings, get)
    aggs = {k.split(".", 1)[1]: v for k, (v, _) in settings.items() if k.startswith("aggregations.")}
    if not aggs:
        raise FlinkSettingsError("aggregations.<name>", "none given: the window function's output fields, e.g. "
                                 "aggregations.cnt = count(*)")
    for name, expr in aggs.items():
        d.set(f"aggregations.{name}", expr, "output field of the window function")
    d.set("output.path", output_path, "--output-path")
    return render(d)


def _at(line: int | None) -> str:
    return f" (line {line})" if line else ""


def _runtime_mode(value: str, line: int | None) -> None:
    if value.lower() != "streaming":
        raise FlinkSettingsError(f"key 'execution.runtime-mode' = {value!r}", "a batch (or automatic) job has no "
                                 "watermarks: every window fires once at the end of the input: not mapped", line)


def _time_characteristic(value: str, line: int | None) -> None:
    if value.lower() != "eventtime":
        raise FlinkSettingsError(f"key 'pipeline.time-characteristic' = {value!r}", "not event time: not mapped "
                                 "(the replay replays event-time windows of a DataStream job)", line)


# Flink's own keys that decide whether the job can be replayed: checked, then listed in the header.
FLINK_KEYS = {"execution.runtime-mode": _runtime_mode, "pipeline.time-characteristic": _time_characteristic}
FLINK_KEYS_READ = {"execution.runtime-mode": "a streaming job, as replayed",
                   "pipeline.time-characteristic": "event time, as replayed"}


def _getter(settings):
    return lambda key, default=None: settings[key][0] if key in settings else default


def _comment(settings, key: str, **names: str) -> str:
    value, line = settings.get(key, (None, None))
    call = CALLS[key].format(value=value, **names)
    where = f", line {line}" if line else ""
    return f"{key}: {call}{where}" if key in settings else f"{key} absent: {call} default"


def _duration(settings, key: str, default: int | None = None) -> int | None:
    if key not in settings:
        return default
    value, line = settings[key]
    return flink_duration_ms(value, f"key '{key}'", line)


def _watermark(d: Derived, settings, get) -> None:
    name = str(get("watermark.strategy", "forBoundedOutOfOrderness"))
    if name not in STRATEGIES:
        raise FlinkSettingsError(f"key 'watermark.strategy' = {name!r}", f"unknown (one of {', '.join(STRATEGIES)})",
                                 settings.get("watermark.strategy", (None, None))[1])
    strategy = STRATEGIES[name]
    d.set("watermark.strategy", strategy, _comment(settings, "watermark.strategy"))
    delay = _duration(settings, "watermark.out-of-orderness")
    if strategy == "bounded_out_of_orderness":
        if delay is None:
            raise FlinkSettingsError("key 'watermark.out-of-orderness'", "required with forBoundedOutOfOrderness")
        d.set("watermark.max_out_of_orderness", format_duration(delay),
              _comment(settings, "watermark.out-of-orderness"))
    elif delay is not None:
        raise FlinkSettingsError("key 'watermark.out-of-orderness'", "forMonotonousTimestamps takes no "
                                 "out-of-orderness", settings["watermark.out-of-orderness"][1])
    interval = _duration(settings, "pipeline.auto-watermark-interval", 200)
    if interval == 0:
        raise FlinkSettingsError("key 'pipeline.auto-watermark-interval'", "0 turns periodic watermarks off: not "
                                 "mapped", settings["pipeline.auto-watermark-interval"][1])
    d.set("watermark.emit", "periodic", "WatermarkStrategy generators emit at the auto-watermark interval")
    d.set("watermark.interval", format_duration(interval), _comment(settings, "pipeline.auto-watermark-interval"))
    idle = _duration(settings, "watermark.idleness")
    if idle:
        d.set("watermark.idle_timeout", format_duration(idle), _comment(settings, "watermark.idleness"))


def _window(d: Derived, settings, get) -> None:
    name = str(get("window.assigner", ""))
    if name not in ASSIGNERS:
        raise FlinkSettingsError(f"key 'window.assigner' = {name!r}", f"{'unknown' if name else 'required'} "
                                 f"(one of {', '.join(ASSIGNERS)}; processing-time assigners are not mapped)",
                                 settings.get("window.assigner", (None, None))[1])
    kind = ASSIGNERS[name]
    d.set("window.type", kind, _comment(settings, "window.assigner"))
    allowed = {"session": ("window.gap",), "tumbling": ("window.size", "window.offset"),
               "sliding": ("window.size", "window.slide", "window.offset")}[kind]
    for key in ("window.size", "window.slide", "window.offset", "window.gap"):
        if key in settings and key not in allowed:
            raise FlinkSettingsError(f"key '{key}'", f"does not apply to {name}", settings[key][1])
    for key in allowed:
        if key != "window.offset" and key not in settings:
            raise FlinkSettingsError(f"key '{key}'", f"required with {name}")
    period = None
    for key in allowed:
        if key == "window.offset":
            offset = _signed_offset(settings)
            if offset is not None:
                d.set(key, format_duration(offset % period), _comment(settings, key, assigner=name))
            continue
        ms = _duration(settings, key)
        d.set(key, format_duration(ms), _comment(settings, key, assigner=name))
        period = ms if key in ("window.size", "window.slide") else period
    d.set("window.allowed_lateness", format_duration(_duration(settings, "window.allowed-lateness", 0)),
          _comment(settings, "window.allowed-lateness"))
    d.set("window.time", "event", f"{name} is an event-time assigner")


def _signed_offset(settings) -> int | None:
    """window.offset may be negative in Flink (`-8 h` aligns days to UTC+8); the window starts only depend on it
    modulo the slide (the size for tumbling windows)."""
    if "window.offset" not in settings:
        return None
    value, line = settings["window.offset"]
    text = str(value).strip()
    ms = flink_duration_ms(text.lstrip("-").strip(), "key 'window.offset'", line)
    return -ms if text.startswith("-") else ms
