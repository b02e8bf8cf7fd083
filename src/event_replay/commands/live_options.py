"""The `--live-*` options, written once: where the live job's output is and how to read it.

`replay compare --live PATH` and `replay tune --against-live PATH` take the same options (format, column mapping,
reader options, late side output, a sink that keeps updates) and read them back as one `LiveSpec`
(compare/live_spec.py), so a user names the live output the same way to either command.
"""
from __future__ import annotations

import argparse
from typing import Any

from ..compare.live_spec import FORMATS, LiveSpec


def add_live_options(parser: Any) -> None:
    """The options after the live output's path, on a parser or an argument group."""
    parser.add_argument("--live-format", choices=FORMATS, default="parquet", help="format of the live output and "
                                                                                   "of --live-late")
    parser.add_argument("--live-columns", action="append", metavar="ROLE=COLUMN,...",
                        help="the live output's column of each role: key, window_start, window_end, the config's "
                             "aggregates, and optionally fire_index, fire_watermark, fire_time, partition (default: "
                             "the same names)")
    parser.add_argument("--live-option", action="append", metavar="KEY=VALUE",
                        help="an option of Spark's reader for the live files, e.g. sep=\\t or header=false")
    parser.add_argument("--live-late", default=None, metavar="PATH", help="the live job's late side output")
    parser.add_argument("--live-late-columns", action="append", metavar="ROLE=COLUMN,...",
                        help="its columns: split, offset, key, event_time, arrival_time (default: the source's)")
    parser.add_argument("--live-keeps-updates", action="store_true",
                        help="the live sink appended every firing (allowed-late re-firings too): compare every "
                             "firing, not only each window's last")


def add_against_live(parser: argparse.ArgumentParser) -> None:
    """`replay tune`'s calibration: --against-live PATH and the options above."""
    g = parser.add_argument_group("calibration against the live output (replay compare's options)")
    g.add_argument("--against-live", default=None, metavar="PATH",
                   help="rank the variants by agreement with the live job's output (firings and late rows matched)")
    add_live_options(g)


def against_live_spec(args: argparse.Namespace) -> LiveSpec | None:
    """The live output `replay tune --against-live` ranks against (None: no calibration)."""
    if not getattr(args, "against_live", None):
        return None
    return LiveSpec.from_args(args, args.against_live)
