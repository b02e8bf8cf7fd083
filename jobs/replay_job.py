"""spark-submit entry: the same job as `replay run`, on the session spark-submit provides.

    spark-submit jobs/replay_job.py --config jobs/configs/demo.yaml

Runs from a checkout without installing the package (src/ is put on the path), so a cluster only needs
this file, src/ (e.g. via --py-files) and the config.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

_SRC = Path(__file__).resolve().parents[1] / "src"
if _SRC.is_dir() and str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

from event_replay.cli import run_replay, summary_line  # noqa: E402
from event_replay.semantics.config import ConfigError, load_config  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="replay_job.py")
    parser.add_argument("--config", required=True)
    args = parser.parse_args(argv)
    t0 = time.monotonic()
    try:
        cfg = load_config(args.config)  # before the session: a bad config fails fast
    except ConfigError as exc:
        print(f"replay: config error: key '{exc.key}': {exc.why}", file=sys.stderr)
        return 2
    from event_replay.spark import build_session

    spark = build_session(app_name="event-replay")  # master and resources come from spark-submit
    try:
        summary = run_replay(spark, cfg)
    except ConfigError as exc:
        print(f"replay: config error: key '{exc.key}': {exc.why}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(summary_line(summary, time.monotonic() - t0), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
