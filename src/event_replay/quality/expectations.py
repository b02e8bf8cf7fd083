"""Custom Great Expectations for a replay's outputs (docs/semantics.md, Windows to Outputs), as Spark-SQL
`UnexpectedRowsExpectation`s.

Each class is one rule: its QUERY selects the rows that break the rule (none = success) and its DESCRIPTION says
the rule in words (rendered in Data Docs). Suites are built with both passed explicitly, so the saved JSON carries
the exact query that runs. Importing this module registers the classes with GX under their snake_case
names (`expect_firings_unique`, ...): it must be imported before a saved suite that uses them is loaded.

The queries run on the *prepared* batches of `quality.prepare` (times as epoch-ms longs, the config's parameters as
`cfg_*` literal columns), so the saved suites do not depend on one job's config. Ordered checks are written with
window functions over replay order: GX's expect_column_values_to_be_increasing is not used (wrong on Spark).
"""
from __future__ import annotations

from typing import ClassVar

from great_expectations.expectations import UnexpectedRowsExpectation

from .findings import COUNT_METRIC, TABLE_METRIC


class ReplayRuleExpectation(UnexpectedRowsExpectation):
    """A rule of the suites: GX's UnexpectedRowsExpectation on the findings of findings.py (the same query, its
    rows and their count, evaluated with every other rule's in one Spark job), validated by GX's own logic."""
    metric_dependencies: ClassVar[tuple[str, ...]] = (TABLE_METRIC, COUNT_METRIC)

    def _validate(self, metrics: dict, runtime_configuration: dict | None = None, execution_engine=None):
        return super()._validate({"unexpected_rows_query.table": metrics[TABLE_METRIC],
                                  "unexpected_rows_query.row_count": metrics[COUNT_METRIC]},
                                 runtime_configuration, execution_engine)


class ExpectFiringsUnique(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "SELECT key, window_start_ms, window_end_ms, fire_index, count(*) AS copies FROM {batch} "
        "GROUP BY key, window_start_ms, window_end_ms, fire_index HAVING count(*) > 1")
    DESCRIPTION: ClassVar[str] = ("No duplicate firing: (key, window_start, window_end, fire_index) is unique in windows/ "
                        "(every firing of a window is emitted once).")


class ExpectFireIndexContiguous(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "SELECT key, window_start_ms, window_end_ms, min(fire_index) AS first_index, max(fire_index) AS last_index, "
        "count(DISTINCT fire_index) AS firings FROM {batch} GROUP BY key, window_start_ms, window_end_ms, cfg_having "
        "HAVING min(fire_index) < 0 "
        "OR (NOT cfg_having AND (min(fire_index) <> 0 OR max(fire_index) <> count(DISTINCT fire_index) - 1))")
    DESCRIPTION: ClassVar[str] = ("fire_index is contiguous from 0 per (key, window): every window in windows/ has its first "
                        "firing (index 0) and no firing is missing between 0 and its last index. With a `having`, "
                        "a dropped firing keeps its index (docs/semantics.md: HAVING): the indexes are only >= 0.")


class ExpectWatermarkFiringsAfterWindowEnd(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "SELECT * FROM {batch} WHERE fire_reason = 'watermark' "
        "AND (fire_watermark_ms IS NULL OR fire_watermark_ms < window_end_ms - 1)")
    DESCRIPTION: ClassVar[str] = ("A `watermark` firing happens only once the stream watermark reached the window's max "
                        "timestamp: fire_watermark >= window_end - 1 ms (docs/semantics.md: Windows).")


class ExpectLateRowFiringsWithinLateness(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "SELECT * FROM {batch} WHERE fire_reason = 'late_row' AND (fire_watermark_ms IS NULL "
        "OR fire_watermark_ms < window_end_ms - 1 "
        "OR fire_watermark_ms >= window_end_ms - 1 + cfg_allowed_lateness_ms)")
    DESCRIPTION: ClassVar[str] = ("A `late_row` firing (an allowed-late row joined a window already due) happens with "
                        "window_end - 1 ms <= fire_watermark < window_end - 1 ms + allowed_lateness: before that the "
                        "window is not due, after it the window is dropped and the row is late "
                        "(docs/semantics.md: Windows).")


class ExpectFireReasonsConsistent(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "SELECT * FROM {batch} WHERE fire_reason IS NULL "
        "OR fire_reason NOT IN ('watermark', 'late_row', 'end_of_input') "
        "OR (fire_reason = 'end_of_input' AND (fire_watermark_ms IS NOT NULL OR cfg_end_of_input <> 'flush')) "
        "OR (fire_reason <> 'end_of_input' AND fire_watermark_ms IS NULL)")
    DESCRIPTION: ClassVar[str] = ("fire_reason is one of watermark, late_row, end_of_input; fire_watermark is null exactly for "
                        "end_of_input firings, and those exist only when replay.end_of_input is flush "
                        "(docs/semantics.md: End of input).")


class ExpectFiringsInWatermarkOrder(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "WITH f AS (SELECT key, window_start_ms, window_end_ms, fire_index, fire_reason, "
        "coalesce(fire_watermark_ms, 9223372036854775807) AS wm FROM {batch}), "
        "o AS (SELECT *, max(wm) OVER (PARTITION BY key, window_start_ms, window_end_ms ORDER BY fire_index "
        "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier_max_wm, "
        "sum(CASE WHEN fire_reason IN ('watermark', 'end_of_input') THEN 1 ELSE 0 END) "
        "OVER (PARTITION BY key, window_start_ms, window_end_ms) AS timer_firings FROM f) "
        "SELECT * FROM o WHERE wm < earlier_max_wm OR timer_firings > 1")
    DESCRIPTION: ClassVar[str] = ("The firings of one window follow the stream watermark: fire_watermark never decreases as "
                        "fire_index grows (an end_of_input firing, at +inf, is the last), and a window fires at most "
                        "once on its timer (watermark or end_of_input); its other firings are late_row firings.")


class ExpectWatermarkNullIffIdle(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "SELECT * FROM {batch} WHERE idle IS NULL OR replay_time_ms IS NULL "
        "OR scope IS NULL OR scope NOT IN ('split', 'stream') "
        "OR (scope = 'stream') <> (split IS NULL) "
        "OR (idle AND watermark_ms IS NOT NULL) OR (NOT idle AND watermark_ms IS NULL)")
    DESCRIPTION: ClassVar[str] = ("Idle rows carry no watermark: watermark is null if and only if idle; scope is split or "
                        "stream and split is null exactly for the stream (docs/semantics.md: Outputs).")


class ExpectWatermarkNonDecreasing(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "WITH g AS (SELECT scope, split, replay_time_ms, min(watermark_ms) AS lowest, max(watermark_ms) AS highest "
        "FROM {batch} WHERE NOT idle AND watermark_ms IS NOT NULL GROUP BY scope, split, replay_time_ms), "
        "o AS (SELECT *, max(highest) OVER (PARTITION BY scope, split ORDER BY replay_time_ms "
        "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier_max FROM g) "
        "SELECT scope, split, replay_time_ms, lowest AS watermark_ms, earlier_max FROM o WHERE lowest < earlier_max")
    DESCRIPTION: ClassVar[str] = ("Per split and for the stream, the watermark never goes back in replay order (replay_time), "
                        "idle rows ignored: no published watermark is below one published earlier "
                        "(docs/semantics.md: Watermark strategies, The per-split minimum).")


# The latest window of a row's time t has the largest max timestamp, so "late for every window" reduces to it:
# tumbling/sliding: start = t - pmod(t - offset, slide) (slide = size for tumbling), end = start + size;
# session: the row's merged session contains [t, t + gap), so its end is at least t + gap (docs/semantics.md:
# Windows; Flink's
# WindowOperator: a merged window is late iff cleanup time = max timestamp + lateness <= watermark).
_LATE_REQUIRED = (
    "CASE WHEN cfg_window_type = 'session' THEN time_ms + cfg_gap_ms "
    "ELSE time_ms - pmod(time_ms - cfg_offset_ms, cfg_slide_ms) + cfg_size_ms END - 1 + cfg_allowed_lateness_ms")


class ExpectLateRowsPastLateness(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "SELECT *, " + _LATE_REQUIRED + " AS required_watermark_ms FROM {batch} "
        "WHERE time_ms IS NULL OR late_watermark_ms IS NULL OR late_watermark_ms < " + _LATE_REQUIRED)
    DESCRIPTION: ClassVar[str] = ("A late row was late for every window of its time: late_watermark >= max timestamp + "
                        "allowed_lateness of its latest window (tumbling/sliding per the assigner); for sessions, "
                        "whose merged window contains [t, t + gap), late_watermark >= t + gap - 1 ms + "
                        "allowed_lateness (docs/semantics.md: Windows).")


class ExpectEveryRowAccountedFor(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "SELECT * FROM {batch} WHERE counts_rows <> counts_partitions OR rows_read IS NULL "
        "OR rows_read <> rows_in_windows + late_rows + quarantined_rows + skipped_rows + filtered_rows "
        "OR least(rows_in_windows, late_rows, quarantined_rows, skipped_rows, filtered_rows) < 0")
    DESCRIPTION: ClassVar[str] = ("counts/ has one row (one per partition for a dt= partitioned history, summed) and every row "
                        "read is counted exactly once: rows_read = rows_in_windows + late_rows + quarantined_rows + "
                        "skipped_rows + filtered_rows (docs/semantics.md: Outputs, Row filter).")


class ExpectLateCountMatchesLateEvents(ReplayRuleExpectation):
    QUERY: ClassVar[str] = "SELECT * FROM {batch} WHERE late_rows <> late_events_rows"
    DESCRIPTION: ClassVar[str] = "counts.late_rows equals the number of rows in late_events/."


class ExpectQuarantineCountMatches(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "SELECT * FROM {batch} WHERE quarantined_rows <> quarantine_rows OR quarantine_without_reason > 0")
    DESCRIPTION: ClassVar[str] = ("counts.quarantined_rows equals the number of rows in quarantine/, and every quarantined "
                        "row carries a reason.")


class ExpectNoWindowLeftOpen(ReplayRuleExpectation):
    QUERY: ClassVar[str] = (
        "SELECT * FROM {batch} WHERE held_rows IS NOT NULL AND ("
        "held_rows > rows_in_windows * cfg_windows_per_row "
        "OR (cfg_end_of_input = 'flush' AND NOT cfg_having AND held_rows_all < rows_in_windows) "
        "OR (cfg_end_of_input = 'flush' AND NOT cfg_having AND cfg_window_type = 'tumbling' "
        "AND held_rows_all <> rows_in_windows))")
    DESCRIPTION: ClassVar[str] = (
        "Completeness, from the count(*) aggregate of each window's last firing (which holds every row the window "
        "ever held). With end_of_input flush no window is left open: the windows' last firings hold at least "
        "rows_in_windows rows (every row that joined a window is in some window's last firing), exactly that for "
        "tumbling windows; not with a `having`, whose dropped firings held rows too (docs/semantics.md: HAVING). "
        "Always: the windows not contained in another written window of their key (sessions grow by merging, "
        "cumulate windows nest) hold at most rows_in_windows rows, times ceil(size/slide) for sliding windows. "
        "Needs a count(*) aggregate in the config (else not checked).")


class ExpectLiveAgreementPerPartition(ReplayRuleExpectation):
    """On compare/partitions.parquet (event_replay.compare: `replay compare`), not on the replay's outputs."""
    QUERY: ClassVar[str] = (
        "SELECT partition, windows, equal, duplicate, value_differs, replay_only, live_only, agreement_pct, "
        "min_agreement_pct FROM {batch} WHERE agreement_pct < min_agreement_pct")
    DESCRIPTION: ClassVar[str] = (
        "Live parity: in every partition, the share of windows whose values in the replay equal those the live job "
        "wrote (replay compare: the last firing per window, or every firing; duplicates count as equal) is at least "
        "the threshold (replay compare --min-agreement, default 100%). A partition below it is listed with its "
        "windows that differ in value, are in the replay only or in live only; compare/differences.csv explains "
        "each one.")


WINDOWS = (ExpectFiringsUnique, ExpectFireIndexContiguous, ExpectWatermarkFiringsAfterWindowEnd,
           ExpectLateRowFiringsWithinLateness, ExpectFireReasonsConsistent, ExpectFiringsInWatermarkOrder)
WATERMARKS = (ExpectWatermarkNullIffIdle, ExpectWatermarkNonDecreasing)
LATE_EVENTS = (ExpectLateRowsPastLateness,)
ACCOUNTING = (ExpectEveryRowAccountedFor, ExpectLateCountMatchesLateEvents, ExpectQuarantineCountMatches,
              ExpectNoWindowLeftOpen)
LIVE_PARITY = (ExpectLiveAgreementPerPartition,)
