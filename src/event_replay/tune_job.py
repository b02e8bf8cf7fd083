"""`python -m event_replay.tune_job --config FILE ...`; also the application the watermark_tuning DAG spark-submits
(then it runs as a script: absolute imports only, and this folder is taken off sys.path so that its modules do not
shadow top-level ones)."""
import os
import sys

if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

from event_replay.commands.tune import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
