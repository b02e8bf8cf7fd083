"""Do the benchmark's modes compute the same thing? Compares the replay's windows output with the Flink job's firings.

    python bench/crosscheck.py --replay bench/out/replay-1m --flink bench/out/flink-1m [--naive bench/out/naive-1m]

Replay vs Flink: firings are matched by (key, window start, window end, fire order) - the replay's fire_index order,
Flink's line order within its key's file (one key goes to one subtask, which writes its firings in firing order) -
and every aggregate column of the job (firings.columns, which the Flink job writes) must be equal: counts and
integers exactly, doubles exactly too, because the replay sums in replay order (engine/windows/fixed_walk.py, or
fixed.py's `_numbered` without the extension: running aggregates over each window's elements in (arrival_time,
split, offset) order) as Flink's incremental
aggregate adds the rows in the order they reach the window; the largest double difference is printed anyway. The
late-row counts must be equal too (the replay's late_events vs Flink's late side output). Naive (no watermarks):
its per-window count/sum are compared with the replay's last firing per window (a double sum within 1e-9 relative:
the naive job sums in another order), to show how many windows differ because late rows were dropped or late firings
added rows. Prints a markdown summary; exit 1 when a firing or the late-row count differs.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

FIRING = ["key", "window_start", "window_end", "fire_order"]
LEGACY_COLUMNS = ["key", "window_start", "window_end", "wm", "cnt", "total", "max_value"]  # before firings.columns


def _ms(s: pd.Series) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(s):
        return (s.dt.tz_localize(None) if s.dt.tz is not None else s).astype("datetime64[ms]").astype("int64")
    return s.astype("int64")


def replay_firings(path: Path) -> pd.DataFrame:
    df = pq.read_table(path / "windows").to_pandas()
    for c in ("window_start", "window_end"):
        df[c] = _ms(df[c])
    df = df.sort_values(["key", "window_start", "window_end", "fire_index"], kind="stable", ignore_index=True)
    df["fire_order"] = df.groupby(["key", "window_start", "window_end"], sort=False).cumcount()
    return df


def flink_columns(path: Path) -> list[str]:
    header = path / "firings.columns"
    return header.read_text().strip().split("\t") if header.exists() else LEGACY_COLUMNS


def flink_firings(path: Path) -> pd.DataFrame:
    names = flink_columns(path)
    # round_trip: Java's Double.toString reads back to the same double only with a correctly rounding parser.
    parts = [pd.read_csv(f, sep="\t", header=None, names=names, dtype={"key": str}, float_precision="round_trip")
             for f in sorted(path.glob("firings-*.tsv")) if f.stat().st_size]
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=names)
    df["fire_order"] = df.groupby(["key", "window_start", "window_end"], sort=False).cumcount()
    return df


def aggregate_columns(path: Path) -> list[str]:
    return [c for c in flink_columns(path) if c not in ("key", "window_start", "window_end", "wm")]


def compare(rp: pd.DataFrame, fl: pd.DataFrame, aggs: list[str]) -> dict:
    """Firings in one output only, firings whose aggregates differ, and per double column the largest difference."""
    missing = [c for c in aggs if c not in rp.columns]
    if missing:
        raise SystemExit(f"the replay's windows output has no column {missing} (the Flink job computed {aggs})")
    ids = rp[FIRING].merge(fl[FIRING], on=FIRING, how="outer", indicator=True)["_merge"].value_counts()
    both = rp[FIRING + aggs].merge(fl[FIRING + aggs], on=FIRING, how="inner", suffixes=("_r", "_f"))
    differs = np.zeros(len(both), bool)
    largest = {}
    for c in aggs:
        r, f = both[f"{c}_r"], both[f"{c}_f"]
        if pd.api.types.is_float_dtype(r) or pd.api.types.is_float_dtype(f):
            r, f = r.astype("float64").to_numpy(), f.astype("float64").to_numpy()
            same = (r == f) | (np.isnan(r) & np.isnan(f))
            gap = np.abs(r - f)[~same]
            largest[c] = float(np.nanmax(gap)) if len(gap) else 0.0
        else:
            same = (r.astype("int64") == f.astype("int64")).to_numpy()
        differs |= ~same
    return {"replay_only": int(ids.get("left_only", 0)), "flink_only": int(ids.get("right_only", 0)),
            "values_differ": int(differs.sum()), "largest_double_difference": largest,
            "first": both[differs].head(10)}


def naive_summary(path: str, rp: pd.DataFrame) -> str:
    nv = pq.read_table(path).to_pandas()
    for c in ("window_start", "window_end"):
        nv[c] = _ms(nv[c])
    last = rp.sort_values("fire_index").groupby(["key", "window_start", "window_end"]).tail(1)
    m = nv.merge(last, on=["key", "window_start", "window_end"], how="outer", suffixes=("_naive", "_replay"),
                 indicator=True)
    total_n, total_r = m["total_naive"].astype("float64"), m["total_replay"].astype("float64")
    same_total = np.isclose(total_n, total_r, rtol=1e-9, atol=0) if pd.api.types.is_float_dtype(
        rp["total"]) else (total_n == total_r)
    same = (m["_merge"] == "both") & (m["cnt_naive"] == m["cnt_replay"]) & same_total
    return (f"- naive windows: {len(nv):,}; replay windows (last firing): {len(last):,}; windows whose naive "
            f"count/sum differ from the replay's final firing or exist in one only: {int((~same).sum()):,}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replay", required=True)
    ap.add_argument("--flink", required=True)
    ap.add_argument("--naive", default=None)
    a = ap.parse_args(argv)
    rp, fl = replay_firings(Path(a.replay)), flink_firings(Path(a.flink))
    aggs = aggregate_columns(Path(a.flink))
    c = compare(rp, fl, aggs)
    n_diff = c["replay_only"] + c["flink_only"] + c["values_differ"]
    late_r = pq.read_table(Path(a.replay) / "late_events").num_rows
    late_f = sum(sum(1 for _ in open(p)) for p in Path(a.flink).glob("late-*.tsv"))
    print(f"- replay firings: {len(rp):,}; Flink firings: {len(fl):,}; firings that differ (matched by key, window "
          f"and fire order; compared on {', '.join(aggs)}): {n_diff:,} (replay only {c['replay_only']:,}, Flink only "
          f"{c['flink_only']:,}, aggregates differ {c['values_differ']:,})")
    if c["largest_double_difference"]:
        gaps = ", ".join(f"{k} {v!r}" for k, v in c["largest_double_difference"].items())
        print(f"- doubles compared exactly (both sum in replay order); largest difference: {gaps}")
    print(f"- late rows: replay {late_r:,}, Flink {late_f:,}")
    if a.naive:
        print(naive_summary(a.naive, rp))
    if len(c["first"]):
        print("\nFirst differing firings (_r replay, _f Flink):\n")
        print(c["first"].to_markdown() if hasattr(c["first"], "to_markdown") else c["first"])
    return 0 if n_diff == 0 and late_r == late_f else 1


if __name__ == "__main__":
    sys.exit(main())
