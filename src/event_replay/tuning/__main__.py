"""`python -m event_replay.tuning --config FILE ...` (also a spark-submit application: absolute imports only)."""
import sys

from event_replay.tuning.cli import main

if __name__ == "__main__":
    sys.exit(main())
