"""The one typed job config: loaded from YAML, validated as a whole before Spark starts (what each key means:
docs/semantics.md).

A config file has six sections, each read and checked by its own module (source_config, watermark_config,
window_config, aggregations_config, replay_range_config, output_config; one key's reading: config_keys), and one
optional root keys, `filter` (filter_config) and `having` (having_config). Here:
the sections put together, in the order a file is checked; the root's keys; the file itself; and `to_raw`, the
YAML-shaped dict `parse_config` reads back to an equal config; `settings_in_words`, the settings a report shows. Every error is a `ConfigError` naming the offending
key (dotted path) and why; all durations and instants are held as integer milliseconds.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

import yaml

from .aggregations_config import parse_aggregations
from .config_keys import ConfigError, read_mapping, refuse_unknown
from .durations import format_duration
from .filter_config import parse_filter
from .having_config import parse_having
from .output_config import OutputConfig, output_raw, parse_output
from .replay_range_config import EndOfInput, ReplayRangeConfig, parse_replay_range, replay_range_raw
from .source_config import SourceConfig, parse_source, source_raw
from .watermark_config import WatermarkConfig, parse_watermark, processing_time_watermark, watermark_raw
from .window_config import WindowConfig, parse_window, window_raw


@dataclass(frozen=True)
class JobConfig:
    source: SourceConfig
    watermark: WatermarkConfig
    window: WindowConfig
    aggregations: Mapping[str, str]
    replay: ReplayRangeConfig
    output: OutputConfig
    # The rows the windows see (a Spark SQL boolean over the log's columns); None: every row (filter_config).
    filter: str | None = None
    # The firings written (a Spark SQL boolean over key and the aggregations' names); None: all (having_config).
    having: str | None = None

    def with_end_of_input(self, end_of_input: EndOfInput) -> "JobConfig":
        """The same config ending its input with `end_of_input` (a partition's own, or the command line's)."""
        return replace(self, replay=replace(self.replay, end_of_input=end_of_input))

    def with_overrides(self, **sections: Mapping[str, Any]) -> "JobConfig":
        """A new config with some raw keys replaced, validated as a whole: `watermark={'idle_timeout': '2m'}`."""
        raw = to_raw(self)
        for section, values in sections.items():
            raw.setdefault(section, {}).update(values)
        return parse_config(raw)


def parse_config(raw: Any) -> JobConfig:
    root = read_mapping(raw, "<root>")
    refuse_unknown(root, {"source", "watermark", "window", "aggregations", "replay", "output", "filter", "having"}, "")
    for section in ("source", "window", "aggregations", "output"):
        if section not in root:
            raise ConfigError(section, "section is required")
    source = parse_source(read_mapping(root["source"], "source"))
    window = parse_window(read_mapping(root["window"], "window"))
    if window.time == "processing":
        watermark = processing_time_watermark(read_mapping(root.get("watermark"), "watermark"))
    else:
        watermark = parse_watermark(read_mapping(root.get("watermark"), "watermark"))
    aggregations = parse_aggregations(root["aggregations"])
    replay = parse_replay_range(read_mapping(root.get("replay"), "replay"))
    output = parse_output(read_mapping(root["output"], "output"))
    return JobConfig(source=source, watermark=watermark, window=window, aggregations=aggregations,
                     replay=replay, output=output,
                     # Optional keys: a job without them never enters their modules.
                     filter=parse_filter(root["filter"]) if root.get("filter") is not None else None,
                     having=parse_having(root["having"], aggregations) if root.get("having") is not None else None)


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
    raw = {
        "source": source_raw(cfg.source),
        # Processing-time windows ignore the section (parse_config warns of each key it holds): none is written.
        "watermark": {} if cfg.window.time == "processing" else watermark_raw(cfg.watermark),
        "window": window_raw(cfg.window),
        "aggregations": dict(cfg.aggregations),
        "replay": replay_range_raw(cfg.replay),
        "output": output_raw(cfg.output),
    }
    if cfg.filter is not None:  # written only when set: a config without one reads back unchanged
        raw["filter"] = cfg.filter
    if cfg.having is not None:
        raw["having"] = cfg.having
    return raw


def settings_in_words(cfg: JobConfig) -> dict[str, str]:
    """The settings that decide firings and late rows, durations as people write them (`5s`): what the comparison
    and the why-report show of the config they explain."""
    w = cfg.watermark
    delay = format_duration(w.max_out_of_orderness_ms) if w.max_out_of_orderness_ms is not None else "-"
    return {"watermark": f"{w.strategy}, max out-of-orderness {delay}, {w.emit}",
            "idle timeout": format_duration(w.idle_timeout_ms) if w.idle_timeout_ms else "none",
            "window": cfg.window.type, "allowed lateness": format_duration(cfg.window.allowed_lateness_ms),
            "end of input": cfg.replay.end_of_input,
            **({"row filter": cfg.filter} if cfg.filter else {}), **({"having": cfg.having} if cfg.having else {})}
