"""Do the benchmark's modes compute the same thing? Compares the replay's windows output with the Flink job's firings.

    python bench/crosscheck.py --replay bench/out/replay-1m --flink bench/out/flink-1m [--naive bench/out/naive-1m]

Replay vs Flink: the multisets of (key, window start, window end, cnt, total, max_value) per firing must be equal, and
so must the late-row counts (the replay's late_events vs Flink's late side output). Naive (no watermarks): its
per-window totals are compared with the replay's last firing per window, to show how many windows differ because
late rows were dropped or late firings added rows. Prints a markdown summary.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq


def _ms(s: pd.Series) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(s):
        return (s.dt.tz_localize(None) if s.dt.tz is not None else s).astype("datetime64[ms]").astype("int64")
    return s.astype("int64")


def replay_firings(path: Path) -> pd.DataFrame:
    df = pq.read_table(path / "windows").to_pandas()
    for c in ("window_start", "window_end"):
        df[c] = _ms(df[c])
    return df


def flink_firings(path: Path) -> pd.DataFrame:
    parts = [pd.read_csv(f, sep="\t", header=None, names=["key", "window_start", "window_end", "wm", "cnt", "total",
                                                          "max_value"], dtype={"key": str})
             for f in sorted(path.glob("firings-*.tsv")) if f.stat().st_size]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["key", "window_start", "window_end", "wm", "cnt", "total", "max_value"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replay", required=True)
    ap.add_argument("--flink", required=True)
    ap.add_argument("--naive", default=None)
    a = ap.parse_args(argv)
    rp, fl = replay_firings(Path(a.replay)), flink_firings(Path(a.flink))
    cols = ["key", "window_start", "window_end", "cnt", "total", "max_value"]
    r = rp[cols].astype({"cnt": "int64", "total": "int64", "max_value": "int64"}).value_counts()
    f = fl[cols].astype({"cnt": "int64", "total": "int64", "max_value": "int64"}).value_counts()
    both = pd.concat([r.rename("replay"), f.rename("flink")], axis=1).fillna(0)
    diff = both[both["replay"] != both["flink"]]
    late_r = pq.read_table(Path(a.replay) / "late_events").num_rows
    late_f = sum(sum(1 for _ in open(p)) for p in Path(a.flink).glob("late-*.tsv"))
    print(f"- replay firings: {len(rp):,}; Flink firings: {len(fl):,}; firings that differ (multiset of key, window, "
          f"count, sum, max): {int(diff['replay'].sum() + diff['flink'].sum()):,}")
    print(f"- late rows: replay {late_r:,}, Flink {late_f:,}")
    if a.naive:
        nv = pq.read_table(a.naive).to_pandas()
        for c in ("window_start", "window_end"):
            nv[c] = _ms(nv[c])
        last = rp.sort_values("fire_index").groupby(["key", "window_start", "window_end"]).tail(1)
        m = nv.merge(last, on=["key", "window_start", "window_end"], how="outer", suffixes=("_naive", "_replay"),
                     indicator=True)
        same = (m["_merge"] == "both") & (m["cnt_naive"] == m["cnt_replay"]) & (m["total_naive"] == m["total_replay"])
        print(f"- naive windows: {len(nv):,}; replay windows (last firing): {len(last):,}; windows whose naive "
              f"count/sum differ from the replay's final firing or exist in one only: {int((~same).sum()):,}")
    if len(diff):
        print("\nFirst differences:\n")
        print(diff.head(10).to_markdown() if hasattr(diff, "to_markdown") else diff.head(10))
    return 0 if diff.empty and late_r == late_f else 1


if __name__ == "__main__":
    sys.exit(main())
