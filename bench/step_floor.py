"""What a DAG step's own Spark application costs before it does any work: the floor under every step after the
replay (each is a spark-submit of its own: issue 46).

    python bench/step_floor.py --reps 3 [--input-bytes N]

Each run is a spark-submit as the DAG's hook makes it for a job that reads `--input-bytes` (the driver's JVM
options of driver_jvm.py: the class archive, and for a small input the quick compiler), whose Python driver
imports the project, starts the session of spark.build_session, runs one trivial Spark job and stops. Printed per
run: wall seconds and the CPU seconds of the process tree (spark-submit's JVM and its Python driver, both reaped);
the 1-minute load average beside them.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from event_replay.driver_jvm import driver_java_options  # noqa: E402
from event_replay.extension import JAR  # noqa: E402

DRIVER = """
from event_replay.spark import build_session
spark = build_session(app_name="step-floor", input_bytes={input_bytes})
spark.range(1).count()
spark.stop()
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(script: Path, input_bytes: int) -> tuple[float, float]:
    python = sys.executable
    cmd = ["spark-submit", "--master", "local[*]", "--conf", f"spark.pyspark.python={python}",
           "--conf", f"spark.pyspark.driver.python={python}", "--conf", "spark.log.level=WARN",
           "--conf", "spark.ui.enabled=false",
           "--conf", f"spark.driver.extraJavaOptions={driver_java_options(None, input_bytes)}",
           "--jars", str(JAR), "--name", "step-floor", str(script)]
    env = {**os.environ, "PATH": f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT / "src")}
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, _children_cpu() - cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--input-bytes", type=int, default=2_500_000, help="what the step would read (30 days of the "
                                                                       "demo's sample: about 2.4 MB)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp, "floor_job.py")
        script.write_text(DRIVER.format(input_bytes=a.input_bytes))
        for i in range(a.reps):
            wall, cpu = one_run(script, a.input_bytes)
            print(f"step floor run {i + 1}: {wall:.2f} s wall, {cpu:.2f} CPU s, load {os.getloadavg()[0]:.2f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
