"""`python -m event_replay.tuning` (tuning/__main__.py, what the watermark_tuning DAG spark-submits) and the
`replay tune` parser: a bad grid is refused with exit code 2 naming the option, before a JVM starts."""
from __future__ import annotations

import argparse
import subprocess
import sys


def test_tune_parser_and_module_refuse_a_bad_grid_before_spark(tmp_path):
    from event_replay.tuning.cli import add_tune_parser

    parser = argparse.ArgumentParser(prog="replay")
    add_tune_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["tune", "--config", "c.yaml", "--max-out-of-orderness", "1s,5s", "--idle-timeout",
                              "none,30s", "--master", "local[1]", "--conf", "a=b"])
    assert (args.command, args.max_out_of_orderness, args.idle_timeout, args.allowed_lateness, args.conf) == \
        ("tune", "1s,5s", "none,30s", None, ["a=b"]) and callable(args.func)
    cfg_file = tmp_path / "job.yaml"
    cfg_file.write_text("source: {path: nowhere}\nwindow: {type: tumbling, size: 2s}\n"
                        "watermark: {max_out_of_orderness: 1s}\naggregations: {cnt: count(*)}\noutput: {path: out}\n")
    proc = subprocess.run([sys.executable, "-m", "event_replay.tuning", "--config", str(cfg_file),
                           "--idle-timeout", "none,1 fortnight"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--idle-timeout" in proc.stderr, proc.stderr
    assert "Spark" not in proc.stderr and "py4j" not in proc.stderr  # refused before a JVM started
