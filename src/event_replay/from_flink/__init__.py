"""Replay configs derived from a Flink job's own settings: a Flink SQL script (sql.py) or a DataStream job's
settings file (conf.py). docs/flink_settings.md maps every Flink setting to its replay config key."""
