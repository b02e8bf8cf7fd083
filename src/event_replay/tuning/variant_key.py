"""A variant's number and a string value as one string column, so that a grid's variants share one plan keyed by it.

`tagged(variant, value, width)` is the number in `width` digits, then `|` and the value, or the number alone for a
null value: injective (the width is fixed, and only a null has nothing after the number), so rows of different
variants never meet in a group or a join, and a variant's null values still meet each other, as they did in a
struct (variant, value). The string, not that struct: Spark sorts a string on an 8-byte prefix and a struct on
none, so every comparison of a sort by a struct goes through the generated row ordering (the calibration's match
sorts 4 x 8.2M firings at 10M rows); the number first keeps the variant and the value's start in the prefix.
"""
from __future__ import annotations

from typing import Iterable

from pyspark.sql import Column
from pyspark.sql import functions as F


def width(variants: Iterable[int]) -> int:
    """The digits of the largest variant number (numbers are >= 0)."""
    return len(str(max(variants, default=0)))


def tagged(variant: Column, value: Column, digits: int) -> Column:
    tag = F.lpad(variant.cast("string"), digits, "0")
    return F.when(value.isNull(), tag).otherwise(F.concat(tag, F.lit("|"), value))


def variant_of(key: Column, digits: int) -> Column:
    return F.substring(key, 1, digits).cast("int")


def value_of(key: Column, digits: int) -> Column:
    """The value back (null for the number alone)."""
    return F.when(F.length(key) > digits, F.substr(key, F.lit(digits + 2)))
