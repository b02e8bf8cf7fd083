"""`replay sample` (commands/sample.py), in process: the options reach the generator (rows, splits, files, CSV,
dt= partitions by arrival), and --partitioned with CSV is refused with exit 2. The generator itself:
tests/samples/test_log.py."""
from __future__ import annotations

import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from event_replay.cli import main


def test_the_options_reach_the_log(tmp_path):
    out = tmp_path / "log"
    assert main(["sample", "--out", str(out), "--rows", "300", "--splits", "3", "--files", "2", "--seed", "5"]) == 0
    t = pq.read_table(out)
    assert t.num_rows == 300 and sorted(set(t.column("split").to_pylist())) == ["p0", "p1", "p2"]
    assert len(list(out.glob("*.parquet"))) == 2


def test_csv_and_partitions(tmp_path):
    csv = tmp_path / "csv"
    assert main(["sample", "--out", str(csv), "--rows", "50", "--format", "csv", "--files", "1"]) == 0
    assert sum(pacsv.read_csv(f).num_rows for f in csv.glob("*.csv")) == 50
    parts = tmp_path / "parts"
    assert main(["sample", "--out", str(parts), "--rows", "400", "--rate", "0.002", "--partitioned", "day"]) == 0
    assert len(list(parts.glob("dt=*"))) >= 2


def test_partitioned_csv_is_refused(tmp_path, capsys):
    assert main(["sample", "--out", str(tmp_path / "x"), "--format", "csv", "--partitioned", "day"]) == 2
    assert "--partitioned writes Parquet only" in capsys.readouterr().err
