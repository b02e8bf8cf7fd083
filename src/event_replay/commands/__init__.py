"""Command-line parsers of `replay`'s subcommands, each on the subparsers of `replay`'s parser (cli.py): compare.py
(`replay compare`, which can rank a tuning grid against the live output after the comparison), tune.py (`replay
tune`, also `python -m event_replay.tune_job`) and from_flink.py (`replay config from-flink-sql|from-flink-conf`)."""
