"""One key of a raw (YAML-shaped) config section, read into a typed value or refused.

Every refusal is a `ConfigError` naming the key's dotted path and why; a key accepted without effect is a
`ConfigWarning`. Durations and instants are read as integer milliseconds (semantics/durations.py).
"""
from __future__ import annotations

from typing import Any, Mapping

from .durations import parse_duration_ms, parse_instant_ms


class ConfigWarning(UserWarning):
    """A config key that is accepted but has no effect (named in the message)."""


class ConfigError(ValueError):
    """A config value that cannot be used; `key` is the dotted path of the offending key."""

    def __init__(self, key: str, why: str):
        self.key = key
        self.why = why
        super().__init__(f"config key '{key}': {why}")


def read_mapping(raw: Any, key: str) -> Mapping[str, Any]:
    """A section (or other mapping) as written; absent (None) reads as empty."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(key, f"must be a mapping, got {type(raw).__name__}")
    return raw


def refuse_unknown(raw: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
    """Refuses the first key of `raw` that is not `allowed` (prefix "": the root)."""
    for k in raw:
        if k not in allowed:
            raise ConfigError(f"{prefix}.{k}" if prefix else str(k), f"unknown key (allowed: {', '.join(sorted(allowed))})")


def read_choice(raw: Mapping[str, Any], name: str, choices: tuple[str, ...], default: str | None, prefix: str) -> str:
    """One of `choices` (case matters); `default` None makes the key required."""
    value = raw.get(name, default)
    if value is None:
        raise ConfigError(f"{prefix}.{name}", f"is required (one of {', '.join(choices)})")
    if value not in choices:
        raise ConfigError(f"{prefix}.{name}", f"unknown value {value!r} (one of {', '.join(choices)})")
    return value


def read_duration(raw: Mapping[str, Any], name: str, prefix: str, *, required: bool = False,
                  default: int | None = None, minimum: int = 0, strictly_positive: bool = False) -> int | None:
    """A duration in ms, at least `minimum` (and above zero if `strictly_positive`); absent or null: `default`."""
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


def read_instant(raw: Mapping[str, Any], name: str, prefix: str) -> int | None:
    """An instant in UTC ms (ISO-8601 or epoch ms); absent or null: None."""
    if raw.get(name) is None:
        return None
    try:
        return parse_instant_ms(raw[name])
    except ValueError as exc:
        raise ConfigError(f"{prefix}.{name}", str(exc)) from None
