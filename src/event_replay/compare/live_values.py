"""A live column's values as the comparison holds them: times as epoch-ms longs, aggregates as the replay's type,
keys as strings. A column whose type cannot hold its role is bad input (`CompareInputError`), named with the column
and its type; values that do not convert become null, and live.py counts them in one pass.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..quality.prepare import to_ms
from .live_spec import CompareInputError

_TIME_TYPES = (T.TimestampType, T.TimestampNTZType, T.DateType, T.StringType, T.IntegerType, T.LongType)
INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_NUMERIC = INTEGRAL + (T.FloatType, T.DoubleType, T.DecimalType)


def check_type(df: DataFrame, name: str, allowed: tuple, role: str, what: str) -> T.DataType:
    """The column's type, refused (naming the column, its type and role) unless one of `allowed`."""
    dtype = df.schema[name].dataType
    if not isinstance(dtype, allowed):
        raise CompareInputError(f"live column {name!r}", f"type {dtype.simpleString()} for {role}: {what}")
    return dtype


def time_ms(df: DataFrame, name: str, role: str) -> Column:
    """The column as epoch-ms longs (quality.prepare.to_ms); null where a value does not convert."""
    dtype = check_type(df, name, _TIME_TYPES, role,
                       "not a time (a timestamp, a date, epoch-ms integers or ISO-8601 / epoch-ms strings)")
    return to_ms(F.col(f"`{name}`"), dtype)


def aggregate_value(df: DataFrame, name: str, agg: str, replay_type: T.DataType) -> Column:
    """The live column as the replay's aggregate type: integral -> long (non-integral values do not convert),
    floating/decimal -> double, anything else -> string."""
    dtype = df.schema[name].dataType
    c = F.col(f"`{name}`")
    if isinstance(replay_type, INTEGRAL):
        if isinstance(dtype, INTEGRAL):
            return c.cast("long")
        if isinstance(dtype, (T.FloatType, T.DoubleType, T.DecimalType, T.StringType)):
            d = c.try_cast("double") if isinstance(dtype, T.StringType) else c.cast("double")
            return F.when(d == F.floor(d), d.try_cast("long"))
        raise CompareInputError(f"live column {name!r}", f"type {dtype.simpleString()} for aggregate {agg} "
                                                         f"({replay_type.simpleString()} in the replay): not a number")
    if isinstance(replay_type, (T.FloatType, T.DoubleType, T.DecimalType)):
        if isinstance(dtype, _NUMERIC):
            return c.cast("double")
        if isinstance(dtype, T.StringType):
            return c.try_cast("double")
        raise CompareInputError(f"live column {name!r}", f"type {dtype.simpleString()} for aggregate {agg} "
                                                         f"({replay_type.simpleString()} in the replay): not a number")
    if isinstance(dtype, (T.StructType, T.ArrayType, T.MapType, T.BinaryType)):
        raise CompareInputError(f"live column {name!r}", f"type {dtype.simpleString()} for aggregate {agg}: "
                                                         "not comparable")
    return c.cast("string")


def replay_aggregate_type(replay_type: T.DataType) -> T.DataType:
    """The type the comparison holds an aggregate in (see aggregate_value)."""
    if isinstance(replay_type, INTEGRAL):
        return T.LongType()
    if isinstance(replay_type, (T.FloatType, T.DoubleType, T.DecimalType)):
        return T.DoubleType()
    return T.StringType()


def key_value(df: DataFrame, name: str) -> Column:
    """The key as a string (a nested or binary key is refused: it compares with nothing)."""
    dtype = df.schema[name].dataType
    if isinstance(dtype, (T.StructType, T.ArrayType, T.MapType, T.BinaryType)):
        raise CompareInputError(f"live column {name!r}", f"type {dtype.simpleString()} for the key: not comparable")
    return F.col(f"`{name}`").cast("string")
