"""semantics/config.py: the root's keys and sections, the file, the round trip through to_raw; a fuzz of the loader."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config_cases import DELETE, base, each_error_names_its_key, with_
from event_replay.semantics.config import load_config, parse_config, settings_in_words, to_raw
from event_replay.semantics.config_keys import ConfigError


def test_base_config_is_valid():
    cfg = parse_config(base())
    assert cfg.watermark.max_out_of_orderness_ms == 5000 and cfg.window.size_ms == 10_000


# (changes to the base config, the key the error must name); each section's own keys: test_<section>_config.py
BAD = [
    ({"extra": 1}, "extra"),
    ({"source": DELETE}, "source"),
    ({"window": DELETE}, "window"),
    ({"aggregations": DELETE}, "aggregations"),
    ({"output": DELETE}, "output"),
    ({"source": "data/log"}, "source"),
    ({"watermark": [1, 2]}, "watermark"),
]


test_each_error_names_its_key = each_error_names_its_key(BAD)


def test_root_must_be_a_mapping():
    with pytest.raises(ConfigError) as exc:
        parse_config(["source"])
    assert exc.value.key == "<root>"


def test_to_raw_round_trip_and_overrides():
    cfg = parse_config(with_({"source.splits": ["a", "b"], "watermark.idle_timeout": "3s",
                              "window.type": "sliding", "window.slide": "5s", "replay.start": 5,
                              "replay.end": 10, "output.windows_files": 8}))
    assert parse_config(to_raw(cfg)) == cfg and cfg.output.windows_files == 8
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


def test_settings_in_words_give_durations_as_people_write_them():
    words = settings_in_words(parse_config(with_({"filter": "status = '403'"})))
    assert words["watermark"] == "bounded_out_of_orderness, max out-of-orderness 5s, periodic"
    assert (words["idle timeout"], words["allowed lateness"], words["row filter"]) == ("none", "0ms", "status = '403'")
    assert "having" not in words and words["window"] == "tumbling"
