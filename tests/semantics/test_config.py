"""Every rule of semantics/config.py: each error names its key; durations; defaults; a fuzz of the loader."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from event_replay.semantics.config import ConfigError, ConfigWarning, load_config, parse_config, to_raw

DELETE = object()


def base() -> dict:
    return {
        "source": {"path": "data/log", "format": "parquet"},
        "watermark": {"strategy": "bounded_out_of_orderness", "max_out_of_orderness": "5s", "emit": "periodic",
                      "interval": "200ms"},
        "window": {"type": "tumbling", "size": "10s"},
        "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
        "replay": {"end_of_input": "flush"},
        "output": {"path": "out/x"},
    }


def with_(changes: dict) -> dict:
    """base() with dotted keys set (or removed with DELETE)."""
    raw = base()
    for dotted, value in changes.items():
        parts = dotted.split(".")
        node = raw
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        if value is DELETE:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = value
    return raw


def test_base_config_is_valid():
    cfg = parse_config(base())
    assert cfg.watermark.max_out_of_orderness_ms == 5000 and cfg.window.size_ms == 10_000


# (changes to the base config, the key the error must name)
BAD = [
    ({"extra": 1}, "extra"),
    ({"source": DELETE}, "source"),
    ({"window": DELETE}, "window"),
    ({"aggregations": DELETE}, "aggregations"),
    ({"output": DELETE}, "output"),
    ({"source": "data/log"}, "source"),
    ({"watermark": [1, 2]}, "watermark"),
    ({"source.bogus": 1}, "source.bogus"),
    ({"source.path": DELETE}, "source.path"),
    ({"source.path": ""}, "source.path"),
    ({"source.path": 12}, "source.path"),
    ({"source.format": "json"}, "source.format"),
    ({"source.columns": "split"}, "source.columns"),
    ({"source.columns": {"partition": "p"}}, "source.columns.partition"),
    ({"source.columns": {"key": ""}}, "source.columns.key"),
    ({"source.columns": {"key": 3}}, "source.columns.key"),
    ({"source.columns": {"key": "split"}}, "source.columns"),
    ({"source.splits": "p0"}, "source.splits"),
    ({"source.splits": ["p0", ""]}, "source.splits"),
    ({"source.splits": ["p0", "p0"]}, "source.splits"),
    ({"source.side_inputs": [None]}, "source.side_inputs"),
    ({"source.splits": ["p0", "rules"], "source.side_inputs": ["rules"]}, "source.side_inputs"),
    ({"watermark.bogus": 1}, "watermark.bogus"),
    ({"watermark.strategy": "punctuated"}, "watermark.strategy"),
    ({"watermark.max_out_of_orderness": DELETE}, "watermark.max_out_of_orderness"),
    ({"watermark.max_out_of_orderness": "5 parsecs"}, "watermark.max_out_of_orderness"),
    ({"watermark.max_out_of_orderness": -1}, "watermark.max_out_of_orderness"),
    ({"watermark.max_out_of_orderness": True}, "watermark.max_out_of_orderness"),
    ({"watermark.max_out_of_orderness": "P1M"}, "watermark.max_out_of_orderness"),
    ({"watermark.strategy": "monotonous", "watermark.max_out_of_orderness": "1s"}, "watermark.max_out_of_orderness"),
    ({"watermark.emit": "sometimes"}, "watermark.emit"),
    ({"watermark.interval": 0}, "watermark.interval"),
    ({"watermark.interval": "0ms"}, "watermark.interval"),
    ({"watermark.emit": "per_event"}, "watermark.interval"),  # the base's 200ms interval has no meaning then
    ({"watermark.emit": "per_event", "watermark.interval": DELETE, "watermark.idle_timeout": "1s"},
     "watermark.idle_timeout"),
    ({"watermark.emit": "per_event", "watermark.interval": DELETE, "watermark.advance_after_silence": "1s"},
     "watermark.advance_after_silence"),
    ({"watermark.idle_timeout": 0}, "watermark.idle_timeout"),
    ({"watermark.idle_timeout": "soon"}, "watermark.idle_timeout"),
    ({"watermark.advance_after_silence": -5}, "watermark.advance_after_silence"),
    ({"window.bogus": 1}, "window.bogus"),
    ({"window.type": DELETE}, "window.type"),
    ({"window.type": "global"}, "window.type"),
    ({"window.time": "wall"}, "window.time"),
    ({"window.size": DELETE}, "window.size"),
    ({"window.size": 0}, "window.size"),
    ({"window.slide": "5s"}, "window.slide"),
    ({"window.gap": "5s"}, "window.gap"),
    ({"window.offset": "10s"}, "window.offset"),
    ({"window.offset": -1}, "window.offset"),
    ({"window.allowed_lateness": "-1s"}, "window.allowed_lateness"),
    ({"window.type": "sliding"}, "window.slide"),
    ({"window.type": "sliding", "window.slide": "20s"}, "window.slide"),
    ({"window.type": "sliding", "window.slide": "5s", "window.offset": "5s"}, "window.offset"),
    ({"window.type": "session", "window.size": DELETE}, "window.gap"),
    ({"window.type": "session", "window.gap": "5s"}, "window.size"),
    ({"window.type": "session", "window.size": DELETE, "window.gap": "5s", "window.offset": 0}, "window.offset"),
    ({"window.type": "session", "window.size": DELETE, "window.gap": 0}, "window.gap"),
    ({"window.time": "processing", "window.allowed_lateness": "1s", "watermark.strategy": "monotonous",
      "watermark.max_out_of_orderness": DELETE, "watermark.emit": "per_event", "watermark.interval": DELETE},
     "window.allowed_lateness"),
    ({"aggregations": {}}, "aggregations"),
    ({"aggregations": ["count(*)"]}, "aggregations"),
    ({"aggregations": {"1cnt": "count(*)"}}, "aggregations.1cnt"),
    ({"aggregations": {"key": "count(*)"}}, "aggregations.key"),
    ({"aggregations": {"fire_index": "count(*)"}}, "aggregations.fire_index"),
    ({"aggregations": {"cnt": ""}}, "aggregations.cnt"),
    ({"aggregations": {"cnt": 3}}, "aggregations.cnt"),
    ({"aggregations": {"cnt": "sum(value"}}, "aggregations.cnt"),
    ({"aggregations": {"cnt": "sum(value) +"}}, "aggregations.cnt"),
    ({"aggregations": {"cnt": "sum(value))("}}, "aggregations.cnt"),
    ({"aggregations": {"cnt": "value"}}, "aggregations.cnt"),
    ({"replay.bogus": 1}, "replay.bogus"),
    ({"replay.start": "not a time"}, "replay.start"),
    ({"replay.end": [2024]}, "replay.end"),
    ({"replay.start": "2024-01-02T00:00:00Z", "replay.end": "2024-01-01T00:00:00Z"}, "replay.end"),
    ({"replay.start": 1000, "replay.end": 1000}, "replay.end"),
    ({"replay.end_of_input": "drain"}, "replay.end_of_input"),
    ({"output.path": DELETE}, "output.path"),
    ({"output.path": ""}, "output.path"),
    ({"output.format": "csv"}, "output.format"),
    ({"output.windows_files": 0}, "output.windows_files"),
    ({"output.windows_files": 4097}, "output.windows_files"),
    ({"output.windows_files": "8"}, "output.windows_files"),
    ({"output.windows_files": True}, "output.windows_files"),
    # Issue 7's rules, one case each where the list above had none: negative or zero durations where forbidden,
    # idleness with per-event emission, unknown window type or strategy (case matters).
    ({"window.size": "-10s"}, "window.size"),
    ({"window.type": "sliding", "window.slide": 0}, "window.slide"),
    ({"window.type": "sliding", "window.slide": "-5s"}, "window.slide"),
    ({"window.type": "session", "window.size": DELETE, "window.gap": "-1s"}, "window.gap"),
    ({"watermark.idle_timeout": "-1s"}, "watermark.idle_timeout"),
    ({"watermark.interval": "-200ms"}, "watermark.interval"),
    ({"watermark.emit": "per_event", "watermark.interval": 0, "watermark.idle_timeout": "1s"},
     "watermark.idle_timeout"),
    ({"window.type": "sliding", "window.size": "10s", "window.slide": "11s"}, "window.slide"),
    ({"window.type": "Tumbling"}, "window.type"),
    ({"watermark.strategy": "BOUNDED"}, "watermark.strategy"),
]


@pytest.mark.parametrize("changes,key", BAD, ids=[f"{i}-{k}" for i, (_, k) in enumerate(BAD)])
def test_each_error_names_its_key(changes, key):
    with pytest.raises(ConfigError) as exc:
        parse_config(with_(changes))
    assert exc.value.key == key
    assert key in str(exc.value) and exc.value.why


def test_root_must_be_a_mapping():
    with pytest.raises(ConfigError) as exc:
        parse_config(["source"])
    assert exc.value.key == "<root>"


@pytest.mark.parametrize("text,ms", [("500ms", 500), ("5s", 5000), ("1m", 60_000), ("2min", 120_000),
                                     ("PT5S", 5000), ("PT0.25S", 250), ("PT1M30S", 90_000), ("1h", 3_600_000),
                                     ("1d", 86_400_000), (750, 750), ("0ms", 0)])
def test_durations(text, ms):
    cfg = parse_config(with_({"watermark.max_out_of_orderness": text}))
    assert cfg.watermark.max_out_of_orderness_ms == ms


def test_defaults_and_derived_values():
    cfg = parse_config(with_({"watermark.interval": DELETE, "replay": DELETE}))
    assert cfg.watermark.interval_ms == 200  # Flink's default autoWatermarkInterval
    assert cfg.watermark.idle_timeout_ms is None and cfg.watermark.advance_after_silence_ms is None
    assert cfg.window.offset_ms == 0 and cfg.window.allowed_lateness_ms == 0 and cfg.window.time == "event"
    assert (cfg.replay.start_ms, cfg.replay.end_ms, cfg.replay.end_of_input) == (None, None, "flush")
    assert dict(cfg.source.columns) == {r: r for r in ("split", "offset", "arrival_time", "event_time", "key")}
    assert cfg.source.splits is None and cfg.source.side_inputs == ()
    # watermark = max_ts - lag, per strategy (SEMANTICS §2).
    assert cfg.watermark.lag_ms == 5001 and cfg.watermark.watermark_of(10_000) == 4999
    sql = parse_config(with_({"watermark.strategy": "sql"})).watermark
    assert sql.lag_ms == 5000
    mono = parse_config(with_({"watermark.strategy": "monotonous", "watermark.max_out_of_orderness": DELETE}))
    assert mono.watermark.lag_ms == 1
    pe = parse_config(with_({"watermark.emit": "per_event", "watermark.interval": DELETE}))
    assert pe.watermark.interval_ms == 0 and not pe.watermark.periodic


def test_time_notions_as_configurations():
    ing = parse_config(with_({"window.time": "ingestion"}))
    assert ing.window.time == "ingestion"
    # Processing time fires on the replay clock: the watermark keys are ignored, each with a warning.
    with pytest.warns(ConfigWarning, match="'watermark.max_out_of_orderness' is ignored"):
        proc = parse_config(with_({"window.time": "processing"}))
    assert proc.window.time == "processing" and proc.window.allowed_lateness_ms == 0


def test_windows_and_instants():
    s = parse_config(with_({"window.type": "sliding", "window.size": "1m", "window.slide": "10s",
                            "window.offset": "2s"})).window
    assert (s.size_ms, s.slide_ms, s.offset_ms) == (60_000, 10_000, 2000)
    g = parse_config(with_({"window.type": "session", "window.size": DELETE, "window.gap": "PT30S"})).window
    assert g.gap_ms == 30_000 and g.size_ms is None
    r = parse_config(with_({"replay.start": "2024-01-01T00:00:00Z", "replay.end": "2024-01-01T00:00:01.5Z"})).replay
    assert (r.start_ms, r.end_ms) == (1_704_067_200_000, 1_704_067_201_500)
    r = parse_config(with_({"replay.start": "2024-01-01T01:00:00+01:00", "replay.end": 1_704_067_200_001})).replay
    assert (r.start_ms, r.end_ms) == (1_704_067_200_000, 1_704_067_200_001)


def test_sources_and_splits():
    cfg = parse_config(with_({"source.format": "csv", "source.columns": {"split": "partition", "key": "user"},
                              "source.splits": ["p1", "p0", 2], "source.side_inputs": ["rules"]}))
    assert cfg.source.columns["split"] == "partition" and cfg.source.columns["offset"] == "offset"
    assert cfg.source.splits == ("p1", "p0", "2") and cfg.source.side_inputs == ("rules",)


def test_to_raw_round_trip_and_overrides():
    cfg = parse_config(with_({"source.splits": ["a", "b"], "watermark.idle_timeout": "3s",
                              "window.type": "sliding", "window.slide": "5s", "replay.start": 5,
                              "replay.end": 10, "output.windows_files": 8}))
    assert parse_config(to_raw(cfg)) == cfg and cfg.output.windows_files == 8
    assert parse_config(base()).output.windows_files == 1 and "windows_files" not in to_raw(parse_config(base()))["output"]
    over = cfg.with_overrides(watermark={"idle_timeout": "2m"})
    assert over.watermark.idle_timeout_ms == 120_000 and over.window == cfg.window
    with pytest.raises(ConfigError) as exc:
        cfg.with_overrides(window={"slide": "1h"})
    assert exc.value.key == "window.slide"


def test_load_config_file(tmp_path):
    p = tmp_path / "job.yaml"
    p.write_text(yaml.safe_dump(base()))
    assert load_config(p) == parse_config(base())
    p.write_text("source: [unclosed\n")
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    assert exc.value.key == "<file>"
    p.write_text(yaml.safe_dump(with_({"window.size": "ten seconds"})))
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    assert exc.value.key == "window.size"


def test_demo_config_is_valid():
    cfg = load_config(Path(__file__).resolve().parents[2] / "jobs" / "configs" / "demo.yaml")
    assert cfg.output.path == "out/demo" and cfg.watermark.idle_timeout_ms == 5000


# The fuzz: anything YAML can express, in the shape of a config or not, gives a JobConfig or a ConfigError.
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                    st.text(max_size=12),
                    st.sampled_from(["5s", "500ms", "1m", "PT5S", "P1M", "0", "-1s", "periodic", "per_event",
                                     "tumbling", "sliding", "session", "event", "processing", "ingestion",
                                     "monotonous", "sql", "bounded_out_of_orderness", "hold", "flush", "csv",
                                     "count(*)", "sum(value", "2024-01-01T00:00:00Z", "x", ""]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=8)
KEYS = {
    "source": ["path", "format", "columns", "splits", "side_inputs", "nope"],
    "watermark": ["strategy", "max_out_of_orderness", "emit", "interval", "idle_timeout", "advance_after_silence"],
    "window": ["type", "size", "slide", "offset", "gap", "allowed_lateness", "time"],
    "replay": ["start", "end", "end_of_input"],
    "output": ["path"],
}


@st.composite
def mutated_configs(draw):
    raw = copy.deepcopy(base())
    for _ in range(draw(st.integers(1, 6))):
        section = draw(st.sampled_from(sorted(KEYS) + ["aggregations", "<root>"]))
        if section == "<root>":
            raw[draw(st.sampled_from(sorted(KEYS) + ["aggregations", "junk"]))] = draw(values)
        elif section == "aggregations":
            raw["aggregations"] = draw(st.one_of(values, st.dictionaries(st.text(max_size=6), values, max_size=3)))
        else:
            node = raw.get(section)
            if not isinstance(node, dict):
                node = raw[section] = {}
            node[draw(st.sampled_from(KEYS[section]))] = draw(values)
    return raw


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_configs())
def test_fuzz_parse_only_raises_config_error(raw):
    try:
        cfg = parse_config(raw)
    except ConfigError as exc:
        assert isinstance(exc.key, str) and exc.why
        return
    assert parse_config(to_raw(cfg)) == cfg  # whatever is accepted survives a round trip


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.one_of(st.text(max_size=60), values.map(lambda v: yaml.safe_dump(v))))
def test_fuzz_load_only_raises_config_error(tmp_path_factory, text):
    p = tmp_path_factory.mktemp("fuzz") / "job.yaml"
    p.write_text(text)
    try:
        load_config(p)
    except ConfigError as exc:
        # The key is the offending one as written: for a YAML key '' (e.g. "? ''") that is '' itself.
        assert isinstance(exc.key, str) and exc.why


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("role", ["split", "offset", "arrival_time", "event_time", "key"])
def test_missing_source_column_is_refused_before_spark_starts(tmp_path, fmt, role, capsys, monkeypatch):
    """`replay run` reads a local source's header/footer before starting Spark: a role's missing column is a
    config error naming `source.columns.<role>`, in milliseconds (exit 2, no JVM)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from event_replay.cli import main

    cols = {c: [1] for c in ("split", "offset", "arrival_time", "event_time", "key", "value") if c != role}
    src = tmp_path / "log"
    (src / "dt=2024-01-01").mkdir(parents=True)
    table = pa.table(cols)
    if fmt == "csv":
        pacsv.write_csv(table, src / "dt=2024-01-01" / "part-0.csv")
    else:
        pq.write_table(table, src / "dt=2024-01-01" / "part-0.parquet")
    raw = with_({"source.path": str(src), "source.format": fmt, "output.path": str(tmp_path / "out")})
    cfg = tmp_path / "job.yaml"
    cfg.write_text(yaml.safe_dump(raw))

    def no_spark(*args, **kwargs):  # a tripwire: reaching Spark means the check came too late
        raise AssertionError("Spark was started")

    monkeypatch.setattr("event_replay.spark.build_session", no_spark)
    monkeypatch.setattr("event_replay.commands.run.build_session", no_spark)  # the name commands/run.py calls
    assert main(["run", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"key 'source.columns.{role}'" in err and f"column '{role}' is not in the source" in err
    assert not (tmp_path / "out").exists()
