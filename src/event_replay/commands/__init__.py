"""The `replay` subcommands, each module one command (or a few that share their inputs): its arguments on the
subparsers of `replay`'s parser (cli.py builds it) and the function that runs it. run.py (`replay run`), outputs.py
(`validate`, `why`, `verify`, `quality`), tune.py (`replay tune`, also `python -m event_replay.tune_job`),
compare.py (`replay compare`, which can rank a tuning grid against the live output after the comparison),
from_flink.py (`replay config from-flink-sql|from-flink-conf`), sample.py (`replay sample`)."""
