"""`replay config from-flink-sql`: the corpus of Flink SQL shapes parses, each mapping, every refusal (construct and
line named), and jobs/flink/demo.sql against the hand-written jobs/configs/demo.yaml. Pure Python."""
from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from event_replay.cli import main
from event_replay.from_flink.script import read_script
from event_replay.from_flink.settings import FlinkSettingsError, flink_duration_ms
from event_replay.from_flink.sql import config_from_flink_sql
from event_replay.semantics.config import load_config

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parent / "flink_sql_corpus"

TABLE = """\
CREATE TABLE events (
  ts TIMESTAMP(3),
  k STRING,
  v DOUBLE,
  proc AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka');
"""
QUERY = """\
SELECT k, window_start, window_end, COUNT(*) AS cnt, SUM(v) AS total
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
"""


def convert(tmp_path, sql: str, **kw):
    f = tmp_path / "job.sql"
    f.write_text(textwrap.dedent(sql))
    return config_from_flink_sql(f, source_path="log", output_path="out", **kw)


def refusal(tmp_path, sql: str, **kw) -> FlinkSettingsError:
    with pytest.raises(FlinkSettingsError) as e:
        convert(tmp_path, sql, **kw)
    return e.value


# --- the corpus ----------------------------------------------------------------------------------------------

def test_corpus_parses_every_statement_the_replay_reads():
    files = [CORPUS / f for f in ("create_table_shapes.sql", "script_statements.sql", "window_tvf_shapes.sql")]
    for f in files:
        script = read_script(f.read_text())
        assert script.unparsed == [], f.name
    tables = read_script((CORPUS / "create_table_shapes.sql").read_text()).tables
    assert sorted(tables) == ["bid", "clicks", "kafkatable", "orders", "print_sink", "user_actions",
                              "user_actions_ltz", "user_actions_proc"]
    assert tables["kafkatable"].watermark.this.name == "event_time" and "offset" in tables["kafkatable"].columns
    assert tables["user_actions_proc"].watermark is None
    assert tables["clicks"].options["scan.watermark.idle-timeout"] == "1min"
    assert "bids" not in tables["bid"].options  # COMMENT 'bids' is not an option
    windows = read_script((CORPUS / "window_tvf_shapes.sql").read_text()).windows
    assert [w.name for w in windows] == ["TUMBLE"] * 3 + ["HOP"] * 3 + ["CUMULATE"] * 2 + ["SESSION"] * 4 + \
        ["TUMBLE"] * 9
    assert [w.line for w in windows[:4]] == [11, 16, 24, 28]
    script = read_script((CORPUS / "script_statements.sql").read_text())
    assert script.settings == {"execution.runtime-mode": ("streaming", 2),
                               "sql-client.execution.result-mode": ("tableau", 3),
                               "table.exec.source.idle-timeout": ("30 s", 4),
                               "pipeline.auto-watermark-interval": ("500ms", 5)}  # parallelism.default RESET
    assert [(w.name, w.line, w.legacy) for w in script.windows] == [
        ("TUMBLE", 45, False), ("HOP", 49, False), ("TUMBLE", 56, False), ("TUMBLE", 64, False), ("TUMBLE", 70, True)]


def test_corpus_statement_set_windows_map(tmp_path):
    """The windows inside EXECUTE STATEMENT SET / BEGIN STATEMENT SET, sink columns naming the aggregates."""
    f = CORPUS / "script_statements.sql"
    _, hop = config_from_flink_sql(f, source_path="log", output_path="out", query_window=2)
    assert (hop.window.type, hop.window.slide_ms, hop.window.size_ms) == ("sliding", 600_000, 3_600_000)
    assert hop.aggregations == {"pv": "count(*)", "uv": "max(page_id)"}  # INSERT INTO pageviews_per_region
    assert (hop.watermark.strategy, hop.watermark.max_out_of_orderness_ms) == ("sql", 2000)
    assert (hop.watermark.interval_ms, hop.watermark.idle_timeout_ms) == (500, 30_000)
    assert hop.source.columns["key"] == "user_region" and hop.source.columns["event_time"] == "viewtime"
    _, day = config_from_flink_sql(f, source_path="log", output_path="out", query_window=3)
    # AVG of a BIGINT is a BIGINT in Flink: the sum / count truncated toward zero.
    assert day.window.size_ms == 86_400_000 and day.aggregations == {"pv": "min(page_id)",
                                                                     "uv": "(sum(page_id) div count(page_id))"}
    _, first = config_from_flink_sql(f, source_path="l", output_path="o", query_window=1)
    assert first.aggregations == {"pv": "count(*)", "uv": "count(DISTINCT user_id)"}
    _, legacy = config_from_flink_sql(f, source_path="l", output_path="o", query_window=5)
    assert (legacy.window.type, legacy.window.size_ms, legacy.aggregations) == ("tumbling", 3_600_000,
                                                                                {"pv": "count(*)"})


def test_corpus_doc_windows_each_mapped_or_refused_by_name():
    f = CORPUS / "window_tvf_shapes.sql"
    outcomes = []
    for n in range(1, 22):
        try:
            _, cfg = config_from_flink_sql(f, source_path="l", output_path="o", query_window=n)
            outcomes.append(cfg.window.type)
        except FlinkSettingsError as e:
            outcomes.append(e.construct.split("(")[0].split(" ")[0])
    # The docs' examples mostly window without a key or without aggregating: each refusal names why.
    assert outcomes == ["TUMBLE", "TUMBLE", "GROUP", "HOP", "HOP", "GROUP", "CUMULATE", "CUMULATE", "SESSION",
                        "session", "GROUP", "SESSION", "TUMBLE", "GROUP", "GROUP", "GROUP", "tumbling", "view",
                        "TUMBLE", "TABLE", "TABLE"]


# --- mappings ------------------------------------------------------------------------------------------------

def test_tumble_maps_watermark_window_key_and_aggregates(tmp_path):
    text, cfg = convert(tmp_path, TABLE + QUERY)
    assert text.startswith("# generated by `replay config from-flink-sql job.sql`")
    w = cfg.watermark
    assert (w.strategy, w.max_out_of_orderness_ms, w.lag_ms) == ("sql", 5000, 5000)  # SQL flavour: max - d
    assert (w.emit, w.interval_ms, w.idle_timeout_ms) == ("periodic", 200, None)  # Flink's defaults
    assert dataclasses.asdict(cfg.window) == {"type": "tumbling", "size_ms": 10_000, "slide_ms": None,
                                              "offset_ms": 0, "gap_ms": None, "allowed_lateness_ms": 0,
                                              "time": "event"}
    assert cfg.source.columns["event_time"] == "ts" and cfg.source.columns["key"] == "k"
    assert cfg.aggregations == {"cnt": "count(*)", "total": "sum(v)"}
    assert (cfg.source.path, cfg.output.path) == ("log", "out")
    assert "# WATERMARK FOR ts AS ts - INTERVAL '5' SECOND (line 6): max - d" in text


def test_settings_and_table_options(tmp_path):
    sets = "SET 'pipeline.auto-watermark-interval' = '1 s';\nSET 'table.exec.source.idle-timeout' = '2 min';\n"
    _, cfg = convert(tmp_path, sets + TABLE + QUERY)
    assert (cfg.watermark.interval_ms, cfg.watermark.idle_timeout_ms) == (1000, 120_000)
    _, cfg = convert(tmp_path, "SET 'table.exec.source.idle-timeout' = '0 ms';\n" + TABLE + QUERY)
    assert cfg.watermark.idle_timeout_ms is None  # 0 = Flink's default: never idle
    table = TABLE.replace("'connector' = 'kafka'", "'connector' = 'kafka', 'scan.watermark.idle-timeout' = '7s'")
    _, cfg = convert(tmp_path, sets + table + QUERY)
    assert cfg.watermark.idle_timeout_ms == 7000  # the table's option wins over the SET
    table = TABLE.replace("'connector' = 'kafka'", "'scan.watermark.emit.strategy' = 'on-event'")
    _, cfg = convert(tmp_path, table + QUERY)
    assert (cfg.watermark.emit, cfg.watermark.interval_ms) == ("per_event", 0)
    _, cfg = convert(tmp_path, TABLE.replace("ts - INTERVAL '5' SECOND", "ts") + QUERY)
    assert (cfg.watermark.strategy, cfg.watermark.max_out_of_orderness_ms) == ("sql", 0)
    _, cfg = convert(tmp_path, TABLE.replace("'5' SECOND", "'00:01:00.250' HOUR TO SECOND") + QUERY)
    assert cfg.watermark.max_out_of_orderness_ms == 60_250


def test_hop_session_offsets_and_named_arguments(tmp_path):
    hop = QUERY.replace("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
                        "HOP(DATA => TABLE events, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '5' MINUTES, "
                        "SIZE => INTERVAL '1' HOUR, `OFFSET` => INTERVAL '-1' MINUTE)")
    _, cfg = convert(tmp_path, TABLE + hop)
    # HOP's positional order is slide, then size; the offset counts modulo the slide (-1 min ~ 4 min).
    assert (cfg.window.type, cfg.window.slide_ms, cfg.window.size_ms, cfg.window.offset_ms) == \
        ("sliding", 300_000, 3_600_000, 240_000)
    positional = QUERY.replace("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
                               "HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' MINUTES, INTERVAL '1' HOUR)")
    assert convert(tmp_path, TABLE + positional)[1].window.slide_ms == 300_000
    offset = QUERY.replace("INTERVAL '10' SECOND)", "INTERVAL '1' DAY, INTERVAL '-8' HOUR)")
    assert convert(tmp_path, TABLE + offset)[1].window.offset_ms == 16 * 3_600_000
    session = QUERY.replace("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
                            "SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '30' SECONDS)")
    _, cfg = convert(tmp_path, TABLE + session)
    assert (cfg.window.type, cfg.window.gap_ms) == ("session", 30_000)


def test_aggregate_names_quoting_and_choice(tmp_path):
    table = TABLE.replace("v DOUBLE", "`value` DOUBLE")
    query = ("SELECT k, window_start, window_end, COUNT(*), MIN(`value`), AVG(`value`) AS mean "
             "FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
             "GROUP BY k, window_start, window_end;\n")
    _, cfg = convert(tmp_path, table + query)
    assert cfg.aggregations == {"count_all": "count(*)", "min_value": "min(value)", "mean": "avg(value)"}
    table2 = TABLE.replace("events", "other")
    two = TABLE + table2 + QUERY + QUERY.replace("TABLE events", "TABLE other").replace("SUM", "MAX")
    _, cfg = convert(tmp_path, two, table="other")
    assert cfg.aggregations["total"] == "max(v)"
    _, cfg = convert(tmp_path, two, query_window=1)
    assert cfg.aggregations["total"] == "sum(v)"


# --- refusals: each names the construct and the line ---------------------------------------------------------

REFUSALS = [
    # (what, script, kwargs, words the message must hold, line)
    ("watermark expression", TABLE.replace("ts - INTERVAL '5' SECOND", "ts - INTERVAL '5' SECOND * 2") + QUERY,
     {}, ["WATERMARK FOR ts AS ts - INTERVAL '5' SECOND * 2", "not mapped"], 6),
    ("watermark function", TABLE.replace("ts - INTERVAL '5' SECOND", "CAST(ts AS TIMESTAMP(3))") + QUERY, {},
     ["WATERMARK FOR ts AS CAST(", "only `ts - INTERVAL"], 6),
    ("watermark months", TABLE.replace("'5' SECOND", "'1' MONTH") + QUERY, {}, ["INTERVAL '1' MONTH",
                                                                               "fixed length"], 6),
    ("watermark sub-ms", TABLE.replace("'5' SECOND", "'0.0005' SECOND") + QUERY, {}, ["whole number of "
                                                                                      "milliseconds"], 6),
    ("no watermark", TABLE.replace(",\n  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND", "") + QUERY, {},
     ["CREATE TABLE events", "no WATERMARK FOR"], 1),
    ("processing time", TABLE + QUERY.replace("DESCRIPTOR(ts)", "DESCRIPTOR(proc)"), {},
     ["DESCRIPTOR(proc)", "proc is PROCTIME() (events, line 5): processing time"], 9),
    ("processing time before a literal", TABLE + QUERY.replace("DESCRIPTOR(ts)", "DESCRIPTOR(proc)")
     .replace("COUNT(*) AS cnt", "'x' AS tag"), {}, ["DESCRIPTOR(proc)", "processing time"], 9),
    ("watermark column", TABLE.replace("proc AS PROCTIME(),", "ts2 TIMESTAMP(3),") +
     QUERY.replace("DESCRIPTOR(ts)", "DESCRIPTOR(ts2)"), {}, ["DESCRIPTOR(ts2)", "not the watermark column",
                                                               "line 6"], 9),
    ("cumulate", TABLE + QUERY.replace("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
                                       "CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '2' SECOND, "
                                       "INTERVAL '10' SECOND)"), {}, ["CUMULATE", "no cumulating windows"], 9),
    ("unknown window function", TABLE + QUERY.replace("TUMBLE(", "SLICE("), {}, ["window function SLICE",
                                                                                 "unknown"], 9),
    ("legacy group window offset", TABLE + "SELECT k, COUNT(*) AS c FROM events\nGROUP BY k, TUMBLE(ts, "
     "INTERVAL '1' HOUR, TIME '00:10:00');\n", {}, ["TUMBLE argument TIME '00:10:00'", "no offset"], 9),
    ("legacy proctime", TABLE + "SELECT k, TUMBLE_PROCTIME(ts, INTERVAL '1' HOUR), COUNT(*) AS c FROM events\n"
     "GROUP BY k, TUMBLE(ts, INTERVAL '1' HOUR);\n", {}, ["TUMBLE_PROCTIME(ts, INTERVAL '1' HOUR)",
                                                          "processing time"], 8),
    ("unmapped aggregate", TABLE + QUERY.replace("SUM(v)", "LISTAGG(k)"), {}, ["LISTAGG(k)", "not mapped"], 8),
    ("arithmetic on a string", TABLE + QUERY.replace("SUM(v)", "SUM(k * 2)"), {}, ["k * 2",
                                                                                     "arithmetic on a STRING"], 8),
    ("distinct of two", TABLE + QUERY.replace("COUNT(*)", "COUNT(DISTINCT v, k)"), {}, ["COUNT(DISTINCT v, k)",
                                                                                        "several columns"], 8),
    ("unknown column", TABLE + QUERY.replace("SUM(v)", "SUM(w)"), {}, ["SUM(w)", "not a column of table events"],
     8),
    ("non-aggregate item", TABLE + QUERY.replace("SUM(v)", "v"), {}, ["v: a column outside an aggregate"], 8),
    ("literal item", TABLE + QUERY.replace("SUM(v)", "'x'"), {}, ["'x': a string constant"], 8),
    ("string cast", TABLE + QUERY.replace("SUM(v)", "CAST(SUM(v) AS STRING)"), {},
     ["CAST(SUM(v) AS STRING): CAST to STRING"], 8),
    ("avg decimal", TABLE.replace("v DOUBLE", "v DECIMAL(10, 2)") + QUERY.replace("SUM(v)", "AVG(v)"), {},
     ["AVG(v): AVG of a DECIMAL(10, 2)"], 8),
    ("sum float", TABLE.replace("v DOUBLE", "v FLOAT") + QUERY.replace("SUM(v)", "SUM(v)"), {},
     ["SUM(v): SUM of a FLOAT"], 8),
    ("several windows", TABLE + QUERY + QUERY, {}, ["windowing query", "2 found", "--query-window"], 12),
    ("query window range", TABLE + QUERY, {"query_window": 2}, ["--query-window 2", "out of range"], None),
    ("unknown table", TABLE + QUERY, {"table": "nope"}, ["--table nope", "no CREATE TABLE"], None),
    ("no windowing query", TABLE + "SELECT * FROM events;\n", {}, ["windowing query", "none found"], 8),
    ("where", TABLE + QUERY.replace("GROUP BY", "WHERE v > 0\nGROUP BY"), {}, ["WHERE v > 0", "filter the log"],
     10),
    ("having", TABLE + QUERY.replace("window_end;", "window_end\nHAVING COUNT(*) > 1;"), {}, ["HAVING"], 11),
    ("join", TABLE + QUERY.replace("GROUP BY", "JOIN dims ON k = dims.k\nGROUP BY"), {}, ["JOIN dims",
                                                                                        "one table"], 10),
    ("grouping sets", TABLE + QUERY.replace("GROUP BY k, window_start, window_end",
                                            "GROUP BY window_start, window_end, GROUPING SETS ((k), ())"), {},
     ["GROUPING SETS", "one key"], 10),
    ("no key", TABLE + QUERY.replace("GROUP BY k, ", "GROUP BY "), {}, ["GROUP BY window_start", "no key column"],
     10),
    ("two keys", TABLE + QUERY.replace("GROUP BY k, ", "GROUP BY k, v, "), {}, ["2 key columns"], 10),
    ("no window columns", TABLE + QUERY.replace("GROUP BY k, window_start, window_end", "GROUP BY k"), {},
     ["GROUP BY k", "without window_start"], 10),
    ("window without aggregation", TABLE + "SELECT * FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), "
                                           "INTERVAL '1' MINUTE));\n", {}, ["TUMBLE window", "without GROUP BY"], 8),
    ("session without partition", TABLE + QUERY.replace("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' "
                                                        "SECOND)", "SESSION(TABLE events, DESCRIPTOR(ts), "
                                                                   "INTERVAL '1' MINUTE)"), {},
     ["SESSION(TABLE events", "no PARTITION BY", "all keys"], 9),
    ("view with where", TABLE + "CREATE VIEW ev AS SELECT * FROM events WHERE v > 0;\n" +
     QUERY.replace("TABLE events", "TABLE ev"), {}, ["view ev (line 8): WHERE v > 0", "filters rows"], 8),
    ("unknown table", TABLE + QUERY.replace("TABLE events", "TABLE nope"), {},
     ["TABLE nope", "not a CREATE TABLE or CREATE VIEW"], 9),
    ("missing size", TABLE + QUERY.replace(", INTERVAL '10' SECOND)", ")"), {},
     ["TUMBLE(TABLE events, DESCRIPTOR(ts)): missing SIZE"], 9),
    ("zero size", TABLE + QUERY.replace("'10' SECOND", "'0' SECOND"), {}, ["TUMBLE size", "greater than zero"], 9),
    ("size not an interval", TABLE + QUERY.replace("INTERVAL '10' SECOND", "10"), {}, ["TUMBLE size",
                                                                                      "not an INTERVAL"], 9),
    ("extra argument", TABLE + QUERY.replace("'10' SECOND)", "'10' SECOND, INTERVAL '1' SECOND, 3)"), {},
     ["TUMBLE argument 3", "unexpected"], 9),
    ("interval 0", "SET 'pipeline.auto-watermark-interval' = '0';\n" + TABLE + QUERY, {},
     ["pipeline.auto-watermark-interval", "periodic watermarks off"], 1),
    ("bad duration", "SET 'table.exec.source.idle-timeout' = 'soon';\n" + TABLE + QUERY, {},
     ["table.exec.source.idle-timeout", "'soon' is not a Flink duration"], 1),
    ("late fire", "SET 'table.exec.emit.late-fire.enabled' = 'true';\n" + TABLE + QUERY, {},
     ["table.exec.emit.late-fire.enabled", "not mapped"], 1),
    ("allow lateness", "SET 'table.exec.emit.allow-lateness' = '1 min';\n" + TABLE + QUERY, {},
     ["table.exec.emit.allow-lateness", "no allowed lateness"], 1),
    ("idle with on-event", TABLE.replace("'connector' = 'kafka'", "'scan.watermark.emit.strategy' = 'on-event', "
                                         "'scan.watermark.idle-timeout' = '5s'") + QUERY, {},
     ["scan.watermark.idle-timeout", "on-event"], 1),
    ("unparsable source table", TABLE.replace("v DOUBLE,", "v DOUBLE NOT NOT,") + QUERY, {},
     ["CREATE TABLE events: not understood at line 4, column 14 ('NOT')", "TABLE events reads (line 9)"], 1),
    ("window top-n", TABLE + "SELECT * FROM (\n" + QUERY.replace(";", "") + ") WHERE cnt > 3;\n", {},
     ["TUMBLE window", "subquery of a further query"], 10),
]


@pytest.mark.parametrize("what,sql,kw,words,line", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_name_the_construct_and_line(tmp_path, what, sql, kw, words, line):
    e = refusal(tmp_path, sql, **kw)
    for w in words:
        assert w in str(e), (what, str(e))
    assert e.line == line, (what, str(e))
    if line is not None:
        assert str(e).startswith(f"line {line}: ")
    assert "\n" not in str(e)


def test_flink_durations():
    for text, ms in (("5 s", 5000), ("200ms", 200), ("1 min", 60_000), ("5000", 5000), ("2 h", 7_200_000),
                     ("PT5S", 5000), ("PT0.5S", 500), ("1d", 86_400_000), (1500, 1500)):
        assert flink_duration_ms(text, "x") == ms
    for bad in ("5 parsecs", "", "-1 s", "5 us", True):
        with pytest.raises(FlinkSettingsError):
            flink_duration_ms(bad, "x")


# --- the shipped demo and the command ------------------------------------------------------------------------

def test_demo_sql_matches_the_hand_written_demo_config(tmp_path):
    """Every semantic key of jobs/configs/demo.yaml, except what the two flavours say differently: the SQL
    watermark max - 501 ms is the DataStream max - 500 ms - 1 (same lag), and window TVF aggregations have no
    allowed lateness (the hand-written demo's 2 s)."""
    hand = load_config(ROOT / "jobs" / "configs" / "demo.yaml")
    text, gen = config_from_flink_sql(ROOT / "jobs" / "flink" / "demo.sql", source_path=hand.source.path,
                                      output_path=hand.output.path)
    f = tmp_path / "gen.yaml"
    f.write_text(text)
    assert load_config(f) == gen
    assert (gen.watermark.strategy, gen.watermark.max_out_of_orderness_ms) == ("sql", 501)
    assert (hand.watermark.strategy, hand.watermark.max_out_of_orderness_ms) == ("bounded_out_of_orderness", 500)
    assert gen.watermark.lag_ms == hand.watermark.lag_ms == 501
    assert dataclasses.replace(gen.watermark, strategy=hand.watermark.strategy, max_out_of_orderness_ms=500) == \
        hand.watermark
    assert gen.window == dataclasses.replace(hand.window, allowed_lateness_ms=0)
    assert gen.source == hand.source and gen.aggregations == hand.aggregations
    assert gen.replay == hand.replay and gen.output == hand.output


def test_command_prints_yaml_and_refuses_with_exit_2(tmp_path, capsys):
    rc = main(["config", "from-flink-sql", str(ROOT / "jobs" / "flink" / "demo.sql"), "--source-path", "data/sample",
               "--output-path", "out/x"])
    out, err = capsys.readouterr()
    assert rc == 0 and err == ""
    f = tmp_path / "job.yaml"
    f.write_text(out)
    assert load_config(f).watermark.max_out_of_orderness_ms == 501
    bad = tmp_path / "bad.sql"
    bad.write_text(TABLE + QUERY.replace("TUMBLE(", "CUMULATE(").replace("'10' SECOND)",
                                                                         "'1' SECOND, INTERVAL '10' SECOND)"))
    rc = main(["config", "from-flink-sql", str(bad), "--source-path", "l", "--output-path", "o"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("replay: line 9: CUMULATE window: the replay engine has no "
                                                   "cumulating windows")
    rc = main(["config", "from-flink-sql", str(tmp_path / "none.sql"), "--source-path", "l", "--output-path", "o"])
    assert rc == 2 and "file not found" in capsys.readouterr().err


# --- issue 30: zones, separators, views, legacy windows ------------------------------------------------------

def test_fixed_offset_zones_and_zones_with_daylight_saving():
    from event_replay.from_flink.sql import zone_fixed_offset

    h = 3_600_000
    assert zone_fixed_offset("UTC", "z", 1) == (0, None)
    assert zone_fixed_offset("GMT+08:00", "z", 1) == (8 * h, None)
    assert zone_fixed_offset("-05:30", "z", 1) == (-(5 * h + 30 * 60_000), None)
    assert zone_fixed_offset("Asia/Shanghai", "z", 1) == (8 * h, "1991-09-14")  # its last DST ended in 1991
    assert zone_fixed_offset("Asia/Kolkata", "z", 1)[0] == 5 * h + 30 * 60_000
    for zone, words in (("Europe/London", "UTC+00:00, UTC+01:00"), ("Nowhere/Atlantis", "unknown time zone")):
        with pytest.raises(FlinkSettingsError) as e:
            zone_fixed_offset(zone, f"SET 'table.local-time-zone' = '{zone}'", 3)
        assert words in str(e.value) and e.value.line == 3


@pytest.mark.parametrize("sql,line,next_word", [
    (TABLE.replace(");\n", ")\n", 1) + QUERY, 1, "SELECT on line 8"),
    ("SET 'pipeline.auto-watermark-interval' = '1 s'\n" + TABLE + QUERY, 1, "CREATE on line 2"),
    (TABLE + "INSERT INTO sink\n" + QUERY.replace(";", "") + "INSERT INTO sink2\n" + QUERY, 8, "INSERT on line 12"),
])
def test_a_missing_semicolon_is_told(tmp_path, sql, line, next_word):
    e = refusal(tmp_path, sql)
    assert e.line == line and next_word in str(e) and "a ';' is missing" in str(e), str(e)


def test_views_legacy_windows_and_settings_in_script_order(tmp_path):
    view = "CREATE VIEW ev (key2, t2, amount) AS SELECT k, ts, v FROM events;\n"
    query = QUERY.replace("TABLE events", "TABLE ev").replace("DESCRIPTOR(ts)", "DESCRIPTOR(t2)") \
        .replace("GROUP BY k,", "GROUP BY key2,").replace("SELECT k,", "SELECT key2,").replace("SUM(v)", "SUM(amount)")
    _, cfg = convert(tmp_path, TABLE + view + query)
    assert (cfg.source.columns["key"], cfg.source.columns["event_time"]) == ("k", "ts")
    assert cfg.aggregations == {"cnt": "count(*)", "total": "sum(v)"}
    legacy = ("SELECT k, HOP_END(ts, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE) AS e, COUNT(*) AS cnt\n"
              "FROM events GROUP BY HOP(ts, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE), k;\n")
    text, cfg = convert(tmp_path, "SET 'pipeline.auto-watermark-interval' = '1 s';\n" + TABLE + legacy +
                        "SET 'pipeline.auto-watermark-interval' = '9 s';\n")
    assert (cfg.window.type, cfg.window.slide_ms, cfg.window.size_ms) == ("sliding", 60_000, 300_000)
    assert cfg.watermark.interval_ms == 1000
    assert "# Note: SET 'pipeline.auto-watermark-interval' = '9 s' (line 11) comes after the query" in text
    assert "# Note: HOP_END(ts, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE) AS e (line 9): the output's window_end" \
        in text
    mismatch = legacy.replace("HOP_END(ts, INTERVAL '1' MINUTE", "HOP_END(ts, INTERVAL '2' MINUTE")
    e = refusal(tmp_path, TABLE + mismatch)
    assert "does not name the GROUP BY's HOP(ts, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)" in str(e)


def test_refusals_quote_the_users_text(tmp_path):
    e = refusal(tmp_path, TABLE + QUERY.replace("SUM(v)", "CAST(SUM(v)   AS\n  STRING)"))
    assert "CAST(SUM(v) AS STRING)" in str(e) and "TEXT" not in str(e)  # not the parser's re-rendering
