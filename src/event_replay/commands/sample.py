"""`replay sample`: write a sample event log (samples/log.py), as files or as dt= (or dt=/hour=) partitions by
arrival time."""
from __future__ import annotations

import argparse
import time

from ..samples.log import SampleSpec, write_partitioned_sample, write_sample


def cmd_sample(args: argparse.Namespace) -> int:
    spec = SampleSpec(rows=args.rows, splits=args.splits, seed=args.seed, keys=args.keys, rate=args.rate,
                      start=args.start, files=args.files, format=args.format, epoch_ms=args.epoch_ms,
                      straggler_fraction=args.stragglers, silent_split=not args.no_silent_split)
    t0 = time.monotonic()
    if args.partitioned:
        if spec.format != "parquet":
            raise argparse.ArgumentTypeError("--partitioned writes Parquet only")
        n = write_partitioned_sample(args.out, spec, args.partitioned)
        print(f"sample: {n} rows, {args.splits} splits -> {args.out} (dt= partitions by arrival "
              f"{args.partitioned}, {time.monotonic() - t0:.1f} s)", flush=True)
        return 0
    n = write_sample(args.out, spec)
    print(f"sample: {n} rows, {args.splits} splits -> {args.out} ({time.monotonic() - t0:.1f} s)", flush=True)
    return 0



def add_sample_parser(sub) -> None:
    """`replay sample` on the subparsers of `replay`'s parser (cli.build_parser)."""
    sample = sub.add_parser("sample", help="write a sample Parquet log")
    sample.add_argument("--out", required=True, help="output directory (replaced if it exists)")
    sample.add_argument("--rows", type=int, default=100_000)
    sample.add_argument("--splits", type=int, default=4)
    sample.add_argument("--seed", type=int, default=0)
    sample.add_argument("--keys", type=int, default=8, help="distinct keys")
    sample.add_argument("--rate", type=float, default=100.0, help="rows per second of arrival time")
    sample.add_argument("--start", default="2024-01-01T00:00:00Z", help="arrival time of the first row")
    sample.add_argument("--files", type=int, default=4, help="number of files")
    sample.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    sample.add_argument("--epoch-ms", action="store_true", help="time columns as epoch-ms integers")
    sample.add_argument("--stragglers", type=float, default=0.005, help="fraction of very late events")
    sample.add_argument("--no-silent-split", action="store_true", help="no split falls silent")
    sample.add_argument("--partitioned", choices=("day", "hour"), default=None,
                        help="write dt=YYYY-MM-DD (day) or dt=/hour=HH (hour) partitions by arrival time, the "
                             "layout `replay run --partition` reads; e.g. --rows 30000 --rate 0.2 spans ~2 days")
    sample.set_defaults(func=cmd_sample)
