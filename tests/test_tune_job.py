"""`python -m event_replay.tune_job` (tune_job.py, what the watermark_tuning DAG spark-submits) as a
process: it refuses a bad grid with exit code 2 naming the option, before a JVM starts (the parser and `main` in
process: tests/commands/test_tune.py)."""
from __future__ import annotations

import subprocess
import sys


def test_module_refuses_a_bad_grid_before_spark(tmp_path):
    cfg_file = tmp_path / "job.yaml"
    cfg_file.write_text("source: {path: nowhere}\nwindow: {type: tumbling, size: 2s}\n"
                        "watermark: {max_out_of_orderness: 1s}\naggregations: {cnt: count(*)}\noutput: {path: out}\n")
    proc = subprocess.run([sys.executable, "-m", "event_replay.tune_job", "--config", str(cfg_file),
                           "--idle-timeout", "none,1 fortnight"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--idle-timeout" in proc.stderr, proc.stderr
    assert "Spark" not in proc.stderr and "py4j" not in proc.stderr  # refused before a JVM started
