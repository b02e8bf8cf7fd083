"""Reading the live job's output (its sink) as `LiveSpec` (compare/live_spec.py) describes it, normalised and checked.

Rows of the late side output are matched by (split, offset) when it has both, else by (key, event time).

A job without a key (`source.columns.key: null`) writes no key: its live output needs none (mapping one is
refused), and both sides' windows and late rows take the key KEYLESS_KEY, the empty string, so that every join of
the comparison on the key matches (a null key would match nothing).
Everything is normalised once: key as a string, times as epoch-ms longs (timestamps, dates, epoch-ms integers or
ISO-8601 / epoch-ms strings), aggregates as the type the replay's column has (quality.prepare.to_ms and try_cast:
ANSI casts would fail the job on a bad value). One Spark pass counts what does not convert; a role whose column is
missing, a column of the wrong type, or values that do not convert are bad input (`CompareInputError`, exit 2),
named with the column, its type and an example value.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..semantics.config import JobConfig
from .live_values import INTEGRAL, aggregate_value, check_type, key_value, time_ms
from .live_spec import (DEFAULT_PARTITION_COLUMN, LATE_ROLES, OPTIONAL_ROLES, WINDOW_ROLES, CompareInputError,
                        LiveSpec)

AGG_PREFIX = "agg__"  # normalised aggregate columns: agg__<name>
KEYLESS_KEY = ""  # the key of every window and late row of a job without a key, on both sides (see above)


@dataclass
class LiveOutput:
    """The live firings, normalised: key (string), window_start_ms, window_end_ms, agg__<name> per compared
    aggregate, and the optional fire_index (int), fire_watermark_ms, fire_time_ms, live_partition (string), each
    null when the sink has no such column; `has` says which optional roles it has. `late`: the live late rows
    (late_key, late_split, late_offset, late_time_ms, late_arrival_ms), or None without --live-late."""
    firings: DataFrame
    aggregates: list[str]
    has: frozenset[str]
    late: DataFrame | None
    late_identity: str | None  # "split, offset" or "key, event time"
    rows: int = 0
    late_rows: int = 0


def _read(spark: SparkSession, path: str, fmt: str, options: Mapping[str, str], what: str) -> DataFrame:
    if "://" not in path and not Path(path).exists():
        raise CompareInputError(what, f"no such file or folder: {path}")
    reader = spark.read.format(fmt)
    opts = dict(options)
    if fmt == "csv":
        opts.setdefault("header", "true")
        if path.endswith(".tsv"):
            opts.setdefault("sep", "\t")
    if fmt == "json":
        opts.setdefault("multiLine", "false")
    if "://" not in path and Path(path).is_dir():
        opts.setdefault("recursiveFileLookup", "false")
    try:
        return reader.options(**opts).load(path)
    except Exception as exc:  # noqa: BLE001 - an unreadable input is bad input, named
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CompareInputError(what, f"cannot read {path} as {fmt}: {first[:300]}") from None


def _column(df: DataFrame, role: str, mapping: Mapping[str, str], what: str, required: bool = True) -> str | None:
    name = mapping.get(role, role)
    if name in df.columns:
        return name
    if required or role in mapping:
        have = ", ".join(df.columns[:30]) + (" ..." if len(df.columns) > 30 else "")
        how = f"mapped by {what}" if role in mapping else f"(no {what} entry for it, so its own name)"
        raise CompareInputError(f"live column {name!r}", f"missing: role {role} {how}; the live output has: {have}")
    return None


def _value_checks(df: DataFrame, checks: list[tuple[str, str, Column, Column]], extra: Sequence[Column] = (),
                  prefix: str = "") -> DataFrame:
    """One pass, one row: the rows (`_rows`), and per check (column, role, raw, converted) the rows whose raw value
    is set but does not convert, with an example; `extra` aggregates beside them; every name after `prefix`."""
    aggs = [F.count(F.lit(1)).alias("_rows"), *extra]
    for i, (_, _, raw, conv) in enumerate(checks):
        bad = raw.isNotNull() & conv.isNull()
        aggs += [F.sum(bad.cast("long")).alias(f"_bad{i}"),
                 F.first(F.when(bad, raw.cast("string")), ignorenulls=True).alias(f"_ex{i}")]
    out = df.agg(*aggs)
    return out.select(*[F.col(c).alias(prefix + c) for c in out.columns]) if prefix else out


def _refuse_bad(r: Mapping, df: DataFrame, checks: list[tuple[str, str, Column, Column]], what: str,
                prefix: str = "") -> None:
    """The first failing check of `_value_checks`'s row is refused."""
    for i, (name, role, _, _) in enumerate(checks):
        if r[f"{prefix}_bad{i}"]:
            dtype = df.schema[name].dataType.simpleString()
            raise CompareInputError(f"live column {name!r}", f"{r[f'{prefix}_bad{i}']} value(s) of type {dtype} are "
                                                             f"not a valid {role}, e.g. {r[f'{prefix}_ex{i}']!r} "
                                                             f"({what})")


def _bad_values(df: DataFrame, checks: list[tuple[str, str, Column, Column]], what: str,
                extra: Sequence[Column] = ()):
    """`_value_checks` collected and refused in a Spark job of its own; returns the row."""
    r = _value_checks(df, checks, extra).first()
    _refuse_bad(r, df, checks, what)
    return r


def read_live(spark: SparkSession, spec: LiveSpec, cfg: JobConfig, replay_types: Mapping[str, T.DataType]
              ) -> LiveOutput:
    """The live output normalised and checked (see the module doc); `replay_types`: the replay's aggregate types."""
    spec.check(cfg)
    raw = _read(spark, spec.path, spec.format, spec.options, "--live")
    m = spec.columns
    keyless = cfg.source.keyless
    if keyless and "key" in m:
        raise CompareInputError("--live-columns", "key is mapped but the config has no key (source.columns.key: null)")
    cols = {role: _column(raw, role, m, "--live-columns") for role in WINDOW_ROLES if not (keyless and role == "key")}
    aggs = spec.compared_aggregates(cfg)
    agg_cols = {a: _column(raw, a, m, "--live-columns") for a in aggs}
    opt = {role: _column(raw, role, m, "--live-columns", required=False) for role in OPTIONAL_ROLES}
    if opt["partition"] is None and "partition" not in m and DEFAULT_PARTITION_COLUMN in raw.columns:
        opt["partition"] = DEFAULT_PARTITION_COLUMN  # dt= folders, as Spark's partition discovery reads them
    checks: list[tuple[str, str, Column, Column]] = []
    sel = [(F.lit(KEYLESS_KEY) if keyless else key_value(raw, cols["key"])).alias("key")]
    for role in ("window_start", "window_end"):
        c = time_ms(raw, cols[role], role)
        checks.append((cols[role], role, F.col(f"`{cols[role]}`"), c))
        sel.append(c.alias(f"{role}_ms"))
    for a, name in agg_cols.items():
        c = aggregate_value(raw, name, a, replay_types[a])
        checks.append((name, f"value of aggregate {a}", F.col(f"`{name}`"), c))
        sel.append(c.alias(AGG_PREFIX + a))
    has = set()
    if opt["fire_index"]:
        name = opt["fire_index"]
        check_type(raw, name, INTEGRAL + (T.StringType,), "fire_index", "not an integer")
        c = F.col(f"`{name}`").try_cast("long")
        checks.append((name, "fire_index", F.col(f"`{name}`"), c))
        sel.append(c.alias("fire_index"))
        has.add("fire_index")
    else:
        sel.append(F.lit(None).cast("long").alias("fire_index"))
    for role in ("fire_watermark", "fire_time"):
        if opt[role]:
            c = time_ms(raw, opt[role], role)
            checks.append((opt[role], role, F.col(f"`{opt[role]}`"), c))
            sel.append(c.alias(f"{role}_ms"))
            has.add(role)
        else:
            sel.append(F.lit(None).cast("long").alias(f"{role}_ms"))
    if opt["partition"]:
        sel.append(F.col(f"`{opt['partition']}`").cast("string").alias("live_partition"))
        has.add("partition")
    else:
        sel.append(F.lit(None).cast("string").alias("live_partition"))
    if not keyless:
        checks.append((cols["key"], "key", F.col(f"`{cols['key']}`"), F.col(f"`{cols['key']}`")))
    firings = raw.select(*sel)
    starts, ends = (time_ms(raw, cols[r], r) for r in ("window_start", "window_end"))
    figures = _value_checks(raw, checks, _window_length_aggs(ends - starts, cfg))
    late_side = _late_side(spark, spec, cfg) if spec.late_path else None
    if late_side is not None:  # both sides' checks in one Spark job
        figures = figures.crossJoin(_value_checks(late_side[2], late_side[3], prefix=_LATE))
    r = figures.first()
    _refuse_bad(r, raw, checks, "--live")
    rows = int(r["_rows"])
    _check_window_lengths(r, cfg, cols)
    late, identity, late_rows = (None, None, 0)
    if late_side is not None:
        late, identity, late_raw, late_checks = late_side
        _refuse_bad(r, late_raw, late_checks, "--live-late", prefix=_LATE)
        late_rows = int(r[f"{_LATE}_rows"])
    return LiveOutput(firings=firings, aggregates=aggs, has=frozenset(has), late=late, late_identity=identity,
                      rows=rows, late_rows=late_rows)


def _window_length_aggs(length: Column, cfg: JobConfig) -> list[Column]:
    if cfg.window.type not in ("tumbling", "sliding"):
        return []
    return [F.sum((length == F.lit(cfg.window.size_ms)).cast("long")).alias("_len_ok"),
            F.first(length, ignorenulls=True).alias("_len_example")]


def _check_window_lengths(r, cfg: JobConfig, cols: Mapping[str, str]) -> None:
    """Tumbling and sliding windows all have the config's size: when no live window does, the columns are not the
    window bounds, or not in ms (epoch seconds?). Named instead of reported as every window differing."""
    w = cfg.window
    if w.type not in ("tumbling", "sliding"):
        return
    if r["_rows"] and not r["_len_ok"]:
        raise CompareInputError(
            f"live columns {cols['window_start']!r}, {cols['window_end']!r}",
            f"no live window is {w.size_ms} ms long as the config's {w.type} windows are "
            f"(e.g. {r['_len_example']} ms): "
            "not the window bounds, or not in milliseconds (epoch seconds?)")


_LATE = "late"  # the prefix of the late side's checks when they run with the firings'


def read_live_late(spark: SparkSession, spec: LiveSpec, cfg: JobConfig) -> tuple[DataFrame, str, int]:
    """The live job's late side output, normalised: late_split, late_offset (null unless it has both), late_key,
    late_time_ms (the time the windows read), late_arrival_ms (null if it has none). Checked in a Spark job of its
    own (read_live checks it with the firings)."""
    late, identity, raw, checks = _late_side(spark, spec, cfg)
    return late, identity, int(_bad_values(raw, checks, "--live-late")["_rows"])


def _late_side(spark: SparkSession, spec: LiveSpec, cfg: JobConfig
               ) -> tuple[DataFrame, str, DataFrame, list[tuple[str, str, Column, Column]]]:
    """read_live_late's frame and identity, the raw frame and the value checks still to run."""
    raw = _read(spark, spec.late_path, spec.format, spec.options, "--live-late")
    src = cfg.source.columns
    m = {role: spec.late_columns.get(role, src.get(role, role)) for role in LATE_ROLES}
    explicit = dict(spec.late_columns)
    time_role = "event_time" if cfg.window.time == "event" else "arrival_time"

    def col(role: str, required: bool) -> str | None:
        name = m[role]
        if name in raw.columns:
            return name
        if required or role in explicit:
            raise CompareInputError(f"live late column {name!r}",
                                    f"missing: role {role}; the late output has: {', '.join(raw.columns[:30])}")
        return None

    split, offset = col("split", False), col("offset", False)
    key, t = (None if cfg.source.keyless else col("key", True)), col(time_role, True)
    arrival = col("arrival_time", False)
    checks: list[tuple[str, str, Column, Column]] = []
    tc = time_ms(raw, t, time_role)
    checks.append((t, time_role, F.col(f"`{t}`"), tc))
    sel = [(key_value(raw, key) if key else F.lit(KEYLESS_KEY)).alias("late_key"), tc.alias("late_time_ms")]
    if split and offset:
        check_type(raw, offset, INTEGRAL + (T.StringType,), "offset", "not an integer")
        oc = F.col(f"`{offset}`").try_cast("long")
        checks.append((offset, "offset", F.col(f"`{offset}`"), oc))
        sel += [F.col(f"`{split}`").cast("string").alias("late_split"), oc.alias("late_offset")]
        identity = "split, offset"
    else:
        sel += [F.lit(None).cast("string").alias("late_split"), F.lit(None).cast("long").alias("late_offset")]
        identity = "key, event time" if time_role == "event_time" else "key, arrival time"
    if arrival and arrival != t:
        ac = time_ms(raw, arrival, "arrival_time")
        checks.append((arrival, "arrival_time", F.col(f"`{arrival}`"), ac))
        sel.append(ac.alias("late_arrival_ms"))
    else:
        sel.append((tc if arrival else F.lit(None).cast("long")).alias("late_arrival_ms"))
    return raw.select(*sel), identity, raw, checks
