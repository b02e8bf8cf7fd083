"""The row filter through the IO layer (io/row_filter.py, io/source.py, the counts): evaluated over the log's own
columns (source names, types as read), dropped rows counted as `filtered_rows` so that rows read = in windows + late
+ quarantined + skipped + filtered for a whole source and for each partition of a span; refusals at plan time."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from event_replay.commands.run import replay_line
from event_replay.history.partitions import Partition
from event_replay.history.span import Span
from event_replay.io.lock import held_output
from event_replay.pipeline import PartitionSpan, WholeSource, commits, run
from event_replay.semantics.config import parse_config
from event_replay.semantics.config_keys import ConfigError
from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import replay
from filter_cases import with_filter
from partition_cases import hourly_cfg, hourly_log

pytestmark = pytest.mark.spark

HOURS = ("2024-01-01T00", "2024-01-01T01", "2024-01-01T02")
ROLES = {"split": "part", "offset": "pos", "arrival_time": "arrived", "event_time": "ts", "key": "user_id"}
STATUS = ["403", "200", None, "403", "403", "500"]


def _log(folder) -> list[LogRow]:
    """Rows under their source names; a third of them 403s, some without a status (a null predicate)."""
    arrivals = [10_000 + 1000 * i for i in range(40)]
    rows = [LogRow(f"p{i % 2}", i, a, a - (7000 if i % 5 == 4 else 0), "bot" if i % 7 == 6 else "u",
                   {"status_code": STATUS[i % len(STATUS)], "value": i}) for i, a in enumerate(arrivals)]
    folder.mkdir()
    pq.write_table(pa.table({"part": [r.split for r in rows], "pos": [r.offset for r in rows],
                             "arrived": [r.arrival_time for r in rows], "ts": [r.event_time for r in rows],
                             "user_id": [r.key for r in rows],
                             "status_code": [r.payload["status_code"] for r in rows],
                             "value": [r.payload["value"] for r in rows]}), folder / "part-0.parquet")
    return rows


def _cfg(log, out, text):
    return parse_config({"source": {"path": str(log), "columns": ROLES},
                         "watermark": {"max_out_of_orderness": 2000, "interval": 1000},
                         "window": {"type": "tumbling", "size": 5000},
                         "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
                         "output": {"path": str(out)}, "filter": text})


def _counts(spark, out) -> list[dict]:
    return [r.asDict() for r in spark.read.parquet(str(out / "counts")).collect()]


def test_a_whole_source_filters_on_its_own_column_names(spark, tmp_path):
    rows = _log(tmp_path / "log")
    cfg = _cfg(tmp_path / "log", tmp_path / "out", "status_code = '403' AND user_id <> 'bot'")
    summary = run(spark, cfg, WholeSource())
    expected = replay(rows, cfg)
    assert summary.filtered_rows == len(expected.filtered) > 0
    assert summary.late_rows == len(expected.late_rows) > 0
    windows = sorted((r["window_start"].timestamp() * 1000, r["cnt"], r["total"]) for r in
                     spark.read.parquet(str(tmp_path / "out" / "windows")).collect())
    assert windows == sorted((f.window_start, f.aggregates["cnt"], f.aggregates["total"]) for f in expected.firings)
    [counts] = _counts(spark, tmp_path / "out")
    assert counts["filtered_rows"] == summary.filtered_rows
    assert f"skipped rows 0, filtered rows {summary.filtered_rows}, 1.0 s" in replay_line(summary, 1.0)
    assert counts["rows_read"] == counts["rows_in_windows"] + counts["late_rows"] + counts["quarantined_rows"] + \
        counts["skipped_rows"] + counts["filtered_rows"] == len(rows)


def test_a_span_counts_filtered_rows_per_partition(spark, tmp_path):
    rows = hourly_log(tmp_path / "log")
    out = tmp_path / "out"
    cfg = with_filter(hourly_cfg(tmp_path / "log", out), "value % 3 <> 0")
    with held_output(spark, cfg.output.path):
        summaries = {pid: s for pid, s, _ in commits(spark, cfg, PartitionSpan(
            Span(tuple(Partition.parse(h) for h in HOURS)), first=True, end_of_input="flush"))}
    counts = _counts(spark, out)
    assert len(counts) == 3 and sum(c["filtered_rows"] for c in counts) == sum(
        1 for r in rows if r.payload["value"] % 3 == 0)
    for c in counts:
        assert c["filtered_rows"] > 0 and c["rows_read"] == c["rows_in_windows"] + c["late_rows"] + \
            c["quarantined_rows"] + c["skipped_rows"] + c["filtered_rows"]
    assert [s.filtered_rows for s in summaries.values()] == [
        next(c["filtered_rows"] for c in counts if int(c["hour"]) == int(pid[-2:])) for pid in summaries]


def test_without_a_filter_the_counts_say_none_was_filtered(spark, tmp_path):
    _log(tmp_path / "log")
    cfg = _cfg(tmp_path / "log", tmp_path / "out", None)
    summary = run(spark, cfg, WholeSource())
    assert summary.filtered_rows == 0 and "filtered" not in replay_line(summary, 1.0)
    [counts] = _counts(spark, tmp_path / "out")
    assert counts["filtered_rows"] == 0


def test_a_column_the_source_lacks_is_refused_at_plan_time(spark, tmp_path):
    _log(tmp_path / "log")
    with pytest.raises(ConfigError) as err:
        run(spark, _cfg(tmp_path / "log", tmp_path / "out", "status = '403'"), WholeSource())
    assert err.value.key == "filter" and "'status' is not in the source" in err.value.why
    assert not (tmp_path / "out" / "windows").exists()
