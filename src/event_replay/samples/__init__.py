"""The sample generators: a sample event log (log.py, `replay sample`) and a multi-day sample log in the partitioned
layout (days.py, `python -m event_replay.samples.days`, what `make demo` replays). Deterministic for given arguments
and seed."""
