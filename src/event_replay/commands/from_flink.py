"""`replay config from-flink-sql` / `from-flink-conf`: print the replay config of a Flink job's settings.

    replay config from-flink-sql FILE.sql [--table T] [--query-window N] --source-path P --output-path O > job.yaml
    replay config from-flink-conf FILE.{yaml,properties} --source-path P --output-path O > job.yaml

The YAML goes to stdout; a construct or key that cannot be mapped exits 2 with one line naming it (and its line).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..from_flink.conf import config_from_flink_conf
from ..from_flink.settings import split_list


def add_config_parser(sub) -> None:
    config = sub.add_parser("config", help="derive a job config from a Flink job's own settings")
    kinds = config.add_subparsers(dest="config_command", required=True)
    sql = kinds.add_parser("from-flink-sql", help="from a Flink SQL script: WATERMARK FOR, SET, a window TVF query")
    sql.add_argument("file", help="the Flink SQL script (.sql)")
    sql.add_argument("--table", default=None, help="only the windowing queries over this CREATE TABLE")
    sql.add_argument("--query-window", type=int, default=None, metavar="N",
                     help="the N-th windowing query (1-based, script order) when there are several")
    conf = kinds.add_parser("from-flink-conf", help="from a DataStream job's settings (YAML or .properties; "
                                                    "keys in docs/flink_settings.md)")
    conf.add_argument("file", help="the settings file (.yaml, .yml or .properties)")
    for p in (sql, conf):
        p.add_argument("--source-path", required=True, help="source.path of the config: the job's event log")
        p.add_argument("--output-path", required=True, help="output.path of the config")
        p.add_argument("--splits", default=None, metavar="S1,S2,...",
                       help="source.splits: the log's splits (needed to replay partition by partition)")
    sql.set_defaults(func=cmd_from_flink_sql)
    conf.set_defaults(func=cmd_from_flink_conf)


def _missing(path: str) -> bool:
    if Path(path).is_file():
        return False
    print(f"replay: file not found: {path}", file=sys.stderr)
    return True


def cmd_from_flink_sql(args: argparse.Namespace) -> int:
    if _missing(args.file):
        return 2
    from ..from_flink.sql import config_from_flink_sql  # lazy: sqlglot, a fifth of replay --help's imports

    text, _ = config_from_flink_sql(args.file, table=args.table, query_window=args.query_window,
                                    source_path=args.source_path, output_path=args.output_path,
                                    splits=split_list(args.splits))
    sys.stdout.write(text)
    return 0


def cmd_from_flink_conf(args: argparse.Namespace) -> int:
    if _missing(args.file):
        return 2

    text, _ = config_from_flink_conf(args.file, source_path=args.source_path, output_path=args.output_path,
                                     splits=split_list(args.splits))
    sys.stdout.write(text)
    return 0
