"""The commands on a job's outputs: `replay validate` (the GX suites), `replay why` (the why-report), `replay quality`
(both in one Spark job, the DAGs' data_quality task) and `replay verify` (does the source still hold a run's input?).

GX and matplotlib are imported by their command only, to keep them out of `replay --help`.
"""
from __future__ import annotations

import argparse

from ..history.partitions import Partition
from ..orchestration.record import main_verify
from ..semantics.config import load_config


def cmd_validate(args: argparse.Namespace) -> int:
    from ..quality.validation import main_validate  # lazy: Great Expectations (see the module doc)

    return main_validate(args.config)


def cmd_why(args: argparse.Namespace) -> int:
    from ..why.report import why_report  # lazy: matplotlib (see the module doc)

    cfg = load_config(args.config)  # refused before Spark starts
    if args.partition:
        Partition.parse(args.partition)  # a malformed id is refused before Spark starts too
    print(f"replay why: {why_report(cfg.output.path, cfg, report_dir=args.out, partition=args.partition)}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    return main_verify(args.run, args.config)


def cmd_quality(args: argparse.Namespace) -> int:
    from ..quality_job import main_quality  # lazy: Great Expectations (see the module doc)

    return main_quality(args.config, args.out, run_name=args.run_name)



def add_output_parsers(sub) -> None:
    """`replay validate`, `why`, `verify` and `quality` on the subparsers of `replay`'s parser (cli.build_parser)."""
    check = sub.add_parser("validate", help="run the data-quality suites on a job's outputs (GX checkpoints + "
                                            "Data Docs); exit 1 when an expectation fails")
    check.add_argument("--config", required=True, help="job config (YAML) whose outputs to validate")
    check.set_defaults(func=cmd_validate)

    why = sub.add_parser("why", help="write the why-report (watermark timelines, late rows by cause) of a job's outputs")
    why.add_argument("--config", required=True, help="job config (YAML) whose outputs to explain")
    why.add_argument("--partition", default=None, metavar="YYYY-MM-DD[THH]",
                     help="the report of one partition (its own timelines), by default into "
                          "<output.path>/why_report/partitions/<id>/, linked from the range's report")
    why.add_argument("--out", default=None, metavar="DIR", help="where to write the report (default: see above)")
    why.set_defaults(func=cmd_why)

    verify = sub.add_parser("verify", help="check that the source still holds the input a backfill run's record "
                                           "lists (files, sizes, modification times): would a rerun read the same?")
    verify.add_argument("run", help="the run's folder (<output.path>/_airflow/<run_id>/), its run.json, or its run "
                                    "id with --config")
    verify.add_argument("--config", default=None, help="the job config whose output holds the run's folder")
    verify.set_defaults(func=cmd_verify)

    quality = sub.add_parser("quality", help="validate and why in one Spark job (the DAGs' data_quality task): Data "
                                             "Docs, why-report and the outcome (data_quality.json) into one folder; "
                                             "exit 0 once the outcome is written, whatever it says")
    quality.add_argument("--config", required=True, help="job config (YAML) whose outputs to check")
    quality.add_argument("--out", required=True, help="folder for _data_docs/, why_report/ and data_quality.json")
    quality.add_argument("--run-name", default="cli", help="the run named in the Data Docs (the Airflow run id)")
    quality.set_defaults(func=cmd_quality)
