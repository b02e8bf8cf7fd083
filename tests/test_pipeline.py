"""One pipeline for every plan (pipeline.py): the whole source keeps no state; a partition continues its
predecessor's carried state and commits its state with its outputs; a span commits partition by partition in order,
says once that it is staged, writes only its last partition's state, resumes from a given commit, and leaves no
staging behind; a partition's plan is built and checked without Spark. (A span's outputs equal to one-by-one runs:
test_range_replay.py.)"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from event_replay.history.partitions import Partition
from event_replay.history.span import Span
from event_replay.layout import DATASETS, STATE_FOLDER
from event_replay.io.lock import held_output
from event_replay.pipeline import OnePartition, PartitionSpan, WholeSource, commits, run
from event_replay.semantics.config_keys import ConfigError
from partition_cases import hourly_cfg, hourly_log
from source_logs import make_cfg

pytestmark = pytest.mark.spark

HOURS = ("2024-01-01T00", "2024-01-01T01", "2024-01-01T02")


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipeline") / "log"
    return root, hourly_log(root)


def _manifest(out: Path, pid: str) -> dict:
    return json.loads((out / STATE_FOLDER / pid / "manifest.json").read_text())


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name.startswith("."))


def test_the_whole_source_replaces_every_dataset_and_keeps_no_state(spark, log, tmp_path):
    root, rows = log
    out = tmp_path / "out"
    summary = run(spark, hourly_cfg(root, out), WholeSource())
    assert summary.rows_read == len(rows)
    assert all((out / d).is_dir() for d in DATASETS) and not (out / STATE_FOLDER).exists()
    assert _leftovers(out) == []


def test_a_partition_continues_its_predecessor_s_state(spark, log, tmp_path):
    root, _ = log
    cfg = hourly_cfg(root, tmp_path / "out")
    run(spark, cfg, OnePartition(Partition.parse(HOURS[0]), first=True))
    run(spark, cfg, OnePartition(Partition.parse(HOURS[1]), end_of_input="flush"))
    out = tmp_path / "out"
    first, second = _manifest(out, HOURS[0]), _manifest(out, HOURS[1])
    assert (first["previous"], first["flushed"]) == (None, False)
    assert (second["previous"], second["flushed"]) == (HOURS[0], True)
    assert second["origin_tick"] == first["origin_tick"]  # one tick timeline across the history
    assert all((out / d / "dt=2024-01-01" / "hour=01").is_dir() for d in DATASETS)


def test_a_span_commits_partition_by_partition_and_resumes(spark, log, tmp_path):
    root, _ = log
    out = tmp_path / "out"
    cfg = hourly_cfg(root, out)
    heard: list[str] = []
    span = Span(tuple(Partition.parse(h) for h in HOURS))
    with held_output(spark, cfg.output.path):
        for pid, summary, _ in commits(spark, cfg, PartitionSpan(span, first=True, end_of_input="flush",
                                                                 say=heard.append)):
            heard.append(pid)
            assert (out / "windows" / "dt=2024-01-01" / f"hour={pid[-2:]}").is_dir()  # committed when yielded
    assert heard[1:] == list(HOURS) and heard[0].startswith(f"replay: {HOURS[0]}..{HOURS[-1]} replayed as one span")
    assert sorted(p.name for p in (out / STATE_FOLDER).iterdir()) == [HOURS[-1]]  # only the last one's state
    assert _manifest(out, HOURS[-1])["previous"] == HOURS[1]
    assert _leftovers(out) == []
    # A run interrupted after its first commit resumes from the second: the first partition is not written again.
    again = tmp_path / "again"
    cfg2 = hourly_cfg(root, again)
    with held_output(spark, cfg2.output.path):
        made = [pid for pid, _, _ in commits(spark, cfg2, PartitionSpan(span, first=True, start=1))]
    assert made == list(HOURS[1:])
    assert not (again / "windows" / "dt=2024-01-01" / "hour=00").exists()
    assert _leftovers(again) == []


def test_a_partition_s_plan_is_built_and_checked_without_spark(tmp_path):
    cfg = make_cfg(tmp_path / "src", out=tmp_path / "out", source={"splits": ["p0"]})
    plan = OnePartition.checked(cfg, "2024-01-02", end_of_input="flush", previous="2024-01-01")
    assert (plan.partition, plan.first, plan.end_of_input, plan.previous) == (Partition.parse("2024-01-02"), False,
                                                                              "flush", "2024-01-01")
    with pytest.raises(ConfigError, match="--partition"):
        OnePartition.checked(cfg, "2024-13-01")
    with pytest.raises(ConfigError, match="source.splits"):
        OnePartition.checked(make_cfg(tmp_path / "src", out=tmp_path / "out"), "2024-01-01", first=True)
