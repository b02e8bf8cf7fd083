"""Which rows reach the windows stage: those the job's filter keeps (docs/semantics.md, "Row filter").

The IO layer puts the filter's verdict on each clean row (io/row_filter.py, WINDOWED). As in Flink, the filter stands
between the watermark assigner and the window operator: every row drives the timeline (its split's watermark and
activity), and only the kept ones can be windowed or late. Without a filter the rows carry no verdict and pass as
they are, so the plan of a replay without one is unchanged.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..io.row_filter import WINDOWED


def windowed_only(rows: DataFrame) -> DataFrame:
    """The rows the filter keeps, without the verdict; all rows when there is no filter."""
    if WINDOWED not in rows.columns:
        return rows
    return rows.filter(F.col(WINDOWED)).drop(WINDOWED)
