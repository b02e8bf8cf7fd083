"""What a Flink job's settings become: the refusal, Flink's duration strings, and the commented YAML config.

Both readers (`sql.py` for a Flink SQL script, `conf.py` for a DataStream job's settings) build a `Derived`: the
raw YAML sections of a job config plus, for each key, a comment naming the Flink construct it stands for. `render`
writes it as YAML with those comments and checks it loads through `semantics.config` like any hand-written
config, so what is printed is always a config `replay run` accepts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..semantics.config import JobConfig, parse_config
from ..semantics.durations import parse_duration_ms


class FlinkSettingsError(ValueError):
    """A Flink construct or setting with no replay equivalent: `construct` names it, `line` says where (or None)."""

    def __init__(self, construct: str, why: str, line: int | None = None):
        self.construct = construct
        self.why = why
        self.line = line
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{where}{construct}: {why}")


# Flink settings that do not change what a job's windows compute (deployment, parallelism, checkpointing, state
# backend, the SQL client's display, plan choices): read, listed in the generated config's header, no key.
NO_EFFECT_KEYS = {
    "parallelism.default", "pipeline.name", "pipeline.jars", "pipeline.classpaths", "pipeline.object-reuse",
    "pipeline.operator-chaining", "execution.buffer-timeout", "table.dml-sync",
    "table.exec.resource.default-parallelism",
    "table.exec.state.ttl", "table.generated-code.max-length", "table.exec.window-agg.buffer-size-limit",
    "table.exec.emit.early-fire.delay", "table.exec.emit.late-fire.delay", "env.java.opts", "env.java.opts.all",
}
NO_EFFECT_PREFIXES = ("sql-client.", "execution.checkpointing.", "state.", "table.exec.mini-batch.",
                      "table.optimizer.", "taskmanager.", "jobmanager.", "rest.", "restart-strategy.",
                      "high-availability.", "table.display.", "execution.target", "yarn.", "kubernetes.",
                      "metrics.", "table.exec.async-lookup.", "blob.", "io.tmp.dirs", "akka.", "pekko.",
                      "security.", "web.", "cluster.", "env.")
NO_EFFECT_WHY = {"table.exec.state.ttl": "window aggregations clear their state when a window fires, not by TTL"}


def no_effect(key: str) -> str | None:
    """Why a Flink setting does not change what the windows compute, or None when it may."""
    if key in NO_EFFECT_KEYS or key.startswith(NO_EFFECT_PREFIXES):
        return NO_EFFECT_WHY.get(key, "no effect on what a window aggregation computes")
    return None


# Flink's own duration syntax (org.apache.flink.util.TimeUtils.parseDuration): a number and an optional unit,
# no unit meaning milliseconds.
_FLINK_UNITS_MS = {
    **dict.fromkeys(("d", "day", "days"), 86_400_000),
    **dict.fromkeys(("h", "hour", "hours"), 3_600_000),
    **dict.fromkeys(("min", "m", "minute", "minutes"), 60_000),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000),
    **dict.fromkeys(("ms", "milli", "millis", "millisecond", "milliseconds", ""), 1),
}
_FLINK_DURATION = re.compile(r"^\s*(\d+)\s*([a-zA-Z]*)\s*$")


def flink_duration_ms(value: Any, construct: str, line: int | None = None) -> int:
    """`'5 s'`, `'200ms'`, `'1 min'`, `'5000'` (ms), `'PT5S'`, or an int of ms, as Flink reads a Duration option."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    text = str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else ""
    m = _FLINK_DURATION.match(text)
    if m and m.group(2).lower() in _FLINK_UNITS_MS:
        return int(m.group(1)) * _FLINK_UNITS_MS[m.group(2).lower()]
    if text.strip().upper().startswith("P"):  # ISO-8601, as java.time.Duration.parse: the config's own parser
        try:
            return parse_duration_ms(text.strip())
        except ValueError:
            pass
    raise FlinkSettingsError(construct, f"{value!r} is not a Flink duration (e.g. '5 s', '200ms', '1 min', "
                                        "'5000' for ms); sub-millisecond units have no replay equivalent", line)


@dataclass
class Derived:
    """A job config's raw sections being derived, each key with the Flink construct it comes from."""
    origin: str  # first header line: what was read
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    comments: dict[str, str] = field(default_factory=dict)  # "watermark.strategy" -> "WATERMARK FOR ... (line 4)"
    notes: list[str] = field(default_factory=list)  # settings read that set no key (header lines)

    def set(self, path: str, value: Any, comment: str | None = None) -> None:
        """`set("source.columns.key", "item", "GROUP BY item (line 9)")`."""
        *parents, last = path.split(".")
        node = self.sections
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
        if comment:
            self.comments[path] = comment


SECTION_ORDER = ("source", "watermark", "window", "aggregations", "filter", "having", "replay", "output")


# A Flink job's settings never name its source's splits (Kafka partitions, files): the user gives them (--splits).
SPLITS_COMMENT = "--splits: the source's splits (a Flink job's settings do not name them)"


def split_list(value: str | list[str] | None) -> list[str] | None:
    """`p0,p1,p2` (or a list) -> ["p0", "p1", "p2"]; None or blank -> None."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    names = [s.strip() for s in items if s.strip()]
    return names or None


def render(derived: Derived) -> tuple[str, JobConfig]:
    """The YAML text (a comment after each derived key) and the config it loads as; ConfigError if it does not."""
    lines = [f"# {derived.origin}", "# Each comment names the Flink setting or construct the key stands for "
                                    "(docs/flink_settings.md)."]
    lines += [f"# Note: {n}" for n in derived.notes]
    for name in sorted(derived.sections, key=SECTION_ORDER.index):
        value = derived.sections[name]
        if not isinstance(value, dict):  # a root key (`filter`)
            comment = derived.comments.get(name)
            lines.append(f"{name}: {_scalar(value)}" + (f"  # {comment}".replace("\n", " ") if comment else ""))
            continue
        lines.append(f"{name}:")
        lines += _render_mapping(value, name, derived.comments, indent=1)
    text = "\n".join(lines) + "\n"
    return text, parse_config(yaml.safe_load(text))


def _render_mapping(mapping: dict[str, Any], path: str, comments: dict[str, str], indent: int) -> list[str]:
    pad = "  " * indent
    out = []
    for key, value in mapping.items():
        here = f"{path}.{key}"
        if isinstance(value, dict):
            out.append(f"{pad}{_scalar(key)}:")
            out += _render_mapping(value, here, comments, indent + 1)
            continue
        line = f"{pad}{_scalar(key)}: {_scalar(value)}"
        if here in comments:
            line += "  # " + comments[here].replace("\n", " ")
        out.append(line)
    return out


def _scalar(value: Any) -> str:
    """One YAML scalar (quoted when YAML would read it as something else)."""
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).removesuffix("\n...\n").strip()
