"""history/state.py: a partitioned history needs its splits declared (docs/semantics.md "Partitions"), and a carried
state is continued only under the config, format, predecessor and emission that wrote it.


Without `source.splits` the splits are those seen in the range: a split whose first row is in hour 1 holds a
replay of hours 0-1 back from its start (it has not published), while hour 0 replayed alone never hears of it
(repro: p0 only in hour 0, p1 from hour 1, bounded 0 ms, periodic 200 ms, tumbling 1 s: the whole range fires
nothing before p1's row, the partition thousands of times). The two cannot agree without knowing the future, so a
partitioned replay without declared splits is refused (exit 2, naming source.splits) before Spark starts."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from event_replay.engine.carry import Carry
from event_replay.history.state import FORMAT_VERSION, Manifest, StateError, checked_manifest, manifest_json
from partition_cases import run_partition
from event_replay.semantics.config import parse_config
from event_replay.semantics.config_keys import ConfigError
from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import Replayer

H = 3_600_000
DAY0 = 1_704_067_200_000  # 2024-01-01T00:00Z
RAW = {"source": {"path": "unused"},
       "watermark": {"max_out_of_orderness": 0, "emit": "periodic", "interval": 200},
       "window": {"type": "tumbling", "size": 1000}, "aggregations": {"cnt": "count(*)"},
       "replay": {"end_of_input": "hold"}, "output": {"path": "unused"}}


def _repro_rows() -> list[LogRow]:
    rows = [LogRow("p0", i, DAY0 + i * 1000, DAY0 + i * 1000, "k") for i in range(3600)]
    return rows + [LogRow("p1", 0, DAY0 + H + 10, DAY0 + H + 10, "k")]


def test_the_repro_differs_only_without_declared_splits():
    """The reference itself shows why: hour 0 with p0's splits only fires; the whole range holds everything."""
    rows, cfg = _repro_rows(), parse_config(RAW)
    hour0 = Replayer(cfg, ["p0"])
    hour0.replay_range([r for r in rows if r.arrival_time < DAY0 + H], DAY0, DAY0 + H)
    whole = Replayer(cfg, ["p0", "p1"])
    whole.replay_range([r for r in rows if r.arrival_time < DAY0 + H], DAY0, DAY0 + H)
    assert len(hour0.result.firings) > 3500 and whole.result.firings == []


def test_run_partition_refuses_a_config_without_declared_splits():
    cfg = parse_config(RAW)
    with pytest.raises(ConfigError) as exc:
        run_partition(None, cfg, "2024-01-01T00", first=True)  # refused before any Spark call
    assert exc.value.key == "source.splits"


def test_replay_run_partition_exits_2_naming_source_splits_before_spark(tmp_path):
    log = tmp_path / "log" / "dt=2024-01-01" / "hour=00"
    log.mkdir(parents=True)
    rows = _repro_rows()[:10]
    pq.write_table(pa.table({"split": [r.split for r in rows], "offset": [r.offset for r in rows],
                             "arrival_time": [r.arrival_time for r in rows],
                             "event_time": [r.event_time for r in rows], "key": [r.key for r in rows]}),
                   log / "part-0.parquet")
    import yaml

    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump({**RAW, "source": {"path": str(tmp_path / "log")},
                                      "output": {"path": str(tmp_path / "out")}}))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "event_replay.cli", "run", "--config", str(config),
                           "--partition", "2024-01-01T00", "--first"], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "source.splits" in proc.stderr
    assert time.monotonic() - t0 < 15 and not (tmp_path / "out").exists()  # no Spark, no output


def _declared(**window):
    return parse_config({**RAW, "source": {"path": "unused", "splits": ["p0", "p1"]},
                         "window": {**RAW["window"], **window}})


def _manifest(cfg, partition="2024-01-01T00", **changes) -> Manifest:
    carry = Carry(origin_tick=DAY0, stream_watermark=DAY0 + 999, stream_idle=False, splits=["p0", "p1"],
                  last_offsets={"p0": 4})
    m = Manifest.after(cfg, partition, None, carry)
    return Manifest(**{**m.__dict__, **changes})


def _check(cfg, m: Manifest):
    return checked_manifest(cfg, manifest_json(m), "state/x", "state/x/manifest.json", "2024-01-01T01",
                            "2024-01-01T00")


def test_a_manifest_round_trips_and_holds_the_carry():
    cfg = _declared()
    m = _check(cfg, _manifest(cfg))
    assert (m.format_version, m.partition, m.previous, m.emit) == (FORMAT_VERSION, "2024-01-01T00", None, "periodic")
    assert (m.origin_tick, m.stream_watermark, m.splits, m.last_offsets) == (DAY0, DAY0 + 999, ["p0", "p1"],
                                                                              {"p0": 4})
    assert m.flushed is False  # end_of_input hold


@pytest.mark.parametrize("changes, says", [({"format_version": FORMAT_VERSION + 1}, "format version"),
                                            ({"partition": "2023-12-31T23"}, "belongs to partition"),
                                            ({"flushed": True}, "end_of_input=flush"),
                                            ({"emit": "per_event"}, "emit=per_event"),
                                            ({"fingerprint": "0" * 16}, "another config")])
def test_a_state_another_run_wrote_is_refused(changes, says):
    cfg = _declared()
    with pytest.raises(StateError, match=says):
        _check(cfg, _manifest(cfg, **changes))


def test_a_changed_window_changes_the_fingerprint_and_a_torn_file_is_refused():
    cfg = _declared()
    with pytest.raises(StateError, match="another config"):
        _check(_declared(size=2000), _manifest(cfg))
    with pytest.raises(StateError, match="unreadable"):
        checked_manifest(cfg, manifest_json(_manifest(cfg))[:40], "f", "f/manifest.json", "b", "a")
