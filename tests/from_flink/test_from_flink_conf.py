"""`replay config from-flink-conf`: a DataStream job's settings (YAML nested or flat, .properties) as a replay
config; every refusal names its key. Pure Python."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from event_replay.cli import main
from event_replay.from_flink.conf import config_from_flink_conf
from event_replay.from_flink.settings import FlinkSettingsError
from event_replay.semantics.config import load_config

ROOT = Path(__file__).resolve().parents[2]
BASE = """\
watermark.out-of-orderness = 5 s
window.assigner = TumblingEventTimeWindows
window.size = 1 min
aggregations.cnt = count(*)
"""


def convert(tmp_path, text: str, name: str = "job.properties"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(text))
    return config_from_flink_conf(f, source_path="log", output_path="out")


def test_datastream_flavour_is_max_minus_d_minus_1(tmp_path):
    text, cfg = convert(tmp_path, BASE)
    w = cfg.watermark
    assert (w.strategy, w.max_out_of_orderness_ms, w.lag_ms) == ("bounded_out_of_orderness", 5000, 5001)
    assert (w.emit, w.interval_ms, w.idle_timeout_ms) == ("periodic", 200, None)
    assert (cfg.window.type, cfg.window.size_ms, cfg.window.allowed_lateness_ms) == ("tumbling", 60_000, 0)
    assert cfg.source.columns["event_time"] == "event_time" and cfg.source.columns["key"] == "key"
    assert "# watermark.out-of-orderness: WatermarkStrategy.forBoundedOutOfOrderness(Duration): max - d - 1, " \
           "line 1" in text


def test_nested_yaml_flat_yaml_and_properties_agree(tmp_path):
    nested = """\
    pipeline:
      auto-watermark-interval: 1 s
    watermark:
      strategy: forMonotonousTimestamps
      idleness: 30 s
      timestamp-column: ts
    window:
      key-by: user
      assigner: SlidingEventTimeWindows
      size: 10 min
      slide: 1 min
      offset: -30 s
      allowed-lateness: 5 s
    aggregations:
      total: sum(amount)
    """
    flat = """\
    pipeline.auto-watermark-interval: 1000
    watermark.strategy: forMonotonousTimestamps
    watermark.idleness: PT30S
    watermark.timestamp-column: ts
    window.key-by: user
    window.assigner: SlidingEventTimeWindows
    window.size: 600000
    window.slide: 60 s
    window.offset: -30 s
    window.allowed-lateness: 5s
    aggregations.total: sum(amount)
    """
    props = "\n".join(line.strip().replace(": ", " = ", 1) for line in textwrap.dedent(flat).splitlines())
    configs = [convert(tmp_path, nested, "a.yaml")[1], convert(tmp_path, flat, "b.yml")[1],
               convert(tmp_path, props, "c.properties")[1]]
    assert configs[0] == configs[1] == configs[2]
    cfg = configs[0]
    assert (cfg.watermark.strategy, cfg.watermark.lag_ms, cfg.watermark.interval_ms) == ("monotonous", 1, 1000)
    assert cfg.watermark.idle_timeout_ms == 30_000
    assert (cfg.window.type, cfg.window.size_ms, cfg.window.slide_ms, cfg.window.offset_ms) == \
        ("sliding", 600_000, 60_000, 30_000)  # -30 s modulo the 1 min slide
    assert cfg.window.allowed_lateness_ms == 5000
    assert (cfg.source.columns["event_time"], cfg.source.columns["key"]) == ("ts", "user")
    assert cfg.aggregations == {"total": "sum(amount)"}


def test_session_windows(tmp_path):
    _, cfg = convert(tmp_path, BASE.replace("TumblingEventTimeWindows", "EventTimeSessionWindows")
                     .replace("window.size = 1 min", "window.gap = 10 s"))
    assert (cfg.window.type, cfg.window.gap_ms) == ("session", 10_000)


REFUSALS = [
    ("unknown key", BASE + "table.exec.source.idle-timeout = 5 s\n", "key 'table.exec.source.idle-timeout'", 5),
    ("unknown strategy", BASE + "watermark.strategy = forGenerator\n", "'forGenerator'", 5),
    ("monotonous with delay", BASE + "watermark.strategy = forMonotonousTimestamps\n",
     "forMonotonousTimestamps takes no out-of-orderness", 1),
    ("no delay", BASE.replace("watermark.out-of-orderness = 5 s\n", ""), "required with forBoundedOutOfOrderness",
     None),
    ("interval 0", BASE + "pipeline.auto-watermark-interval = 0\n", "periodic watermarks off", 5),
    ("bad duration", BASE + "watermark.idleness = soon\n", "'soon' is not a Flink duration", 5),
    ("sub-ms", BASE.replace("5 s", "500 us"), "not a Flink duration", 1),
    ("processing-time assigner", BASE.replace("TumblingEventTimeWindows", "TumblingProcessingTimeWindows"),
     "processing-time assigners are not mapped", 2),
    ("no assigner", BASE.replace("window.assigner = TumblingEventTimeWindows\n", ""), "'window.assigner'", None),
    ("missing size", BASE.replace("window.size = 1 min\n", ""), "key 'window.size': required", None),
    ("slide on tumbling", BASE + "window.slide = 10 s\n", "key 'window.slide': does not apply", 5),
    ("gap on tumbling", BASE + "window.gap = 10 s\n", "key 'window.gap': does not apply", 5),
    ("no aggregations", BASE.replace("aggregations.cnt = count(*)\n", ""), "aggregations.<name>", None),
    ("not key = value", BASE + "just words\n", "just words: expected `key = value`", 5),
]


@pytest.mark.parametrize("what,text,words,line", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_name_the_key(tmp_path, what, text, words, line):
    with pytest.raises(FlinkSettingsError) as e:
        convert(tmp_path, text)
    assert words in str(e.value), (what, str(e.value))
    assert e.value.line == line, (what, str(e.value))


def test_demo_datastream_settings_equal_the_hand_written_demo_config(tmp_path, capsys):
    """Every key of jobs/configs/demo.yaml, through the command and the config loader."""
    hand = load_config(ROOT / "jobs" / "configs" / "demo.yaml")
    rc = main(["config", "from-flink-conf", str(ROOT / "jobs" / "flink" / "demo_datastream.properties"),
               "--source-path", hand.source.path, "--output-path", hand.output.path])
    out = capsys.readouterr().out
    assert rc == 0
    f = tmp_path / "gen.yaml"
    f.write_text(out)
    assert load_config(f) == hand
    bad = tmp_path / "bad.properties"
    bad.write_text(BASE.replace("TumblingEventTimeWindows", "GlobalWindows"))
    rc = main(["config", "from-flink-conf", str(bad), "--source-path", "l", "--output-path", "o"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("replay: line 2: key 'window.assigner' = "
                                                               "'GlobalWindows': unknown")


# --- issue 30: no key ignored silently --------------------------------------------------------------------

@pytest.mark.parametrize("text,name,words,line", [
    (BASE + "window.size = 2 min\n", "job.properties", ["key 'window.size'", "given twice (also on line 3)"], 5),
    ("window:\n  size: 1 min\nwindow.size: 2 min\n" + BASE.replace(" = ", ": ").replace("window.size: 1 min\n", ""),
     "job.yaml", ["key 'window.size'", "given twice"], 3),
    ("window:\n  size: 1 min\n  size: 2 min\n", "job.yaml", ["key 'size'", "given twice"], 3),
    (BASE + "window.key-by =\n", "job.properties", ["key 'window.key-by'", "has no value"], 5),
    (BASE.replace(" = ", ": ") + "window.key-by:\n", "job.yaml", ["key 'window.key-by'", "has no value"], 5),
    (BASE + "execution.runtime-mode = BATCH\n", "job.properties", ["execution.runtime-mode", "no watermarks"], 5),
    (BASE + "pipeline.time-characteristic = ProcessingTime\n", "job.properties", ["not event time"], 5),
    (BASE + "table.local-time-zone = Asia/Shanghai\n", "job.properties", ["key 'table.local-time-zone'",
                                                                          "unknown: it may change"], 5),
    (BASE + "pipeline.auto-watermark-interval.extra = 1\n", "job.properties", ["unknown"], 5),
])
def test_conf_keys_never_ignored_silently(tmp_path, text, name, words, line):
    with pytest.raises(FlinkSettingsError) as e:
        convert(tmp_path, text, name)
    for w in words:
        assert w in str(e.value), str(e.value)
    assert e.value.line == line, str(e.value)


def test_conf_flink_keys_without_effect_are_listed(tmp_path):
    text, cfg = convert(tmp_path, BASE + "parallelism.default = 4\nexecution.runtime-mode = STREAMING\n"
                                         "state.backend.type = rocksdb\ntaskmanager.numberOfTaskSlots = 2\n"
                                         "execution.checkpointing.interval = 10 s\n")
    assert "# Note: parallelism.default = 4 (line 5): no effect on what a window aggregation computes" in text
    assert "# Note: execution.runtime-mode = STREAMING (line 6): a streaming job, as replayed" in text
    assert "state.backend.type = rocksdb (line 7)" in text and "taskmanager.numberOfTaskSlots" in text
    assert cfg.window.size_ms == 60_000
