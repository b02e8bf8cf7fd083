"""`replay config from-flink-sql` / `from-flink-conf` as commands (commands/from_flink.py): the YAML on stdout loads as
the config, --table, --query-window and --splits reach it, and a missing file, a missing option or a construct with
no replay equivalent exits 2 with one line naming it. Pure Python."""
from __future__ import annotations

import pytest

from event_replay.cli import main
from event_replay.semantics.config import load_config

SQL = """\
CREATE TABLE events (ts TIMESTAMP(3), k STRING, v DOUBLE, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH ('connector' = 'kafka');
CREATE TABLE other (t TIMESTAMP(3), k STRING, WATERMARK FOR t AS t - INTERVAL '1' SECOND)
  WITH ('connector' = 'kafka');
SELECT k, window_start, window_end, COUNT(*) AS cnt
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end;
SELECT k, window_start, window_end, SUM(v) AS total
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end;
SELECT k, window_start, window_end, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE other, DESCRIPTOR(t), INTERVAL '30' SECOND)) GROUP BY k, window_start, window_end;
"""


def run(capsys, tmp_path, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    if rc == 0:
        (tmp_path / "job.yaml").write_text(out)
        return rc, load_config(tmp_path / "job.yaml"), err
    return rc, out, err


@pytest.fixture
def script(tmp_path):
    f = tmp_path / "job.sql"
    f.write_text(SQL)
    return str(f)


def test_the_chosen_query_s_config_on_stdout(capsys, tmp_path, script):
    base = ["config", "from-flink-sql", script, "--source-path", "log", "--output-path", "out"]
    rc, cfg, _ = run(capsys, tmp_path, *base, "--query-window", "2", "--splits", "p0, p1")
    assert rc == 0 and cfg.window.size_ms == 60_000 and list(cfg.aggregations) == ["total"]
    assert (cfg.source.path, cfg.output.path, cfg.source.splits) == ("log", "out", ("p0", "p1"))
    rc, cfg, _ = run(capsys, tmp_path, *base, "--table", "other")
    assert rc == 0 and cfg.window.size_ms == 30_000 and cfg.watermark.max_out_of_orderness_ms == 1000


def test_several_queries_without_a_choice_exit_2_naming_it(capsys, tmp_path, script):
    rc, out, err = run(capsys, tmp_path, "config", "from-flink-sql", script, "--source-path", "l", "--output-path", "o")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "--query-window" in err


@pytest.mark.parametrize("kind", ["from-flink-sql", "from-flink-conf"])
def test_a_missing_file_exits_2_naming_it(capsys, tmp_path, kind):
    rc, out, err = run(capsys, tmp_path, "config", kind, str(tmp_path / "absent"), "--source-path", "l",
                       "--output-path", "o")
    assert rc == 2 and out == "" and err == f"replay: file not found: {tmp_path / 'absent'}\n"


def test_source_and_output_paths_are_required(capsys, script):
    with pytest.raises(SystemExit) as e:
        main(["config", "from-flink-sql", script, "--output-path", "o"])
    assert e.value.code == 2 and "--source-path" in capsys.readouterr().err
