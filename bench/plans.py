"""The physical plans of a whole-source replay (windows, late events, watermarks) as text, with Spark's expression
ids and scratch paths removed: two trees whose files are equal plan the same Spark work, a stronger check than a
timing A/B for a change meant to leave the engine's work alone.

    .venv/bin/python bench/plans.py --tree <old worktree> --log bench/data/log-1m --shape headline --out old.txt
    .venv/bin/python bench/plans.py --tree . --log bench/data/log-1m --shape headline --out new.txt && cmp old.txt new.txt

`--tree`'s `src/` is imported (its jar in src/event_replay/jvm/); the config is bench/configs/<shape>.yaml.
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="the project tree whose engine plans")
    ap.add_argument("--log", required=True, help="a generated log (bench/generate.py, bench/bursty.py)")
    ap.add_argument("--shape", default="headline", help="bench/configs/<shape>.yaml")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    sys.path.insert(0, str(Path(a.tree).resolve() / "src"))
    from event_replay import engine
    from event_replay.io import read_source
    from event_replay.semantics.config import load_config
    from event_replay.spark import build_session

    raw = yaml.safe_load((BENCH / "configs" / f"{a.shape}.yaml").read_text())
    raw["source"]["path"], raw["output"]["path"] = a.log, tempfile.mkdtemp(prefix="plans-")
    config = Path(raw["output"]["path"], "job.yaml")
    config.write_text(yaml.safe_dump(raw))
    cfg = load_config(str(config))
    spark = build_session(app_name="bench-plans")
    engine.fixed_plans(spark)
    src = read_source(spark, cfg)
    if (Path(a.tree) / "src" / "event_replay" / "history").is_dir():  # the history package (issue 29)
        from event_replay.history.partitions import Clock
        result, _ = engine.replay(spark, src.rows, cfg, src.splits, Clock.of_source(src),
                                  tick_partials=src.tick_partials)
    elif hasattr(src, "clock"):  # the one engine entry, before the history package
        result, _ = engine.replay(spark, src.rows, cfg, src.splits, src.clock(), tick_partials=src.tick_partials)
    else:  # a tree from before it (9c64a0f and earlier)
        start = src.start_ms if src.start_ms is not None else 0
        end = src.end_ms if src.end_ms is not None else start
        result = engine.replay(spark, src.rows, cfg, src.splits, start, end, src.tick_partials)
    with open(a.out, "w") as f:
        for name in ("windows", "late_events", "watermarks"):
            plan = getattr(result, name)._jdf.queryExecution().executedPlan().toString()
            plan = re.sub(r"#\d+L?", "#", plan)
            plan = re.sub(r"event-replay-scratch-[^/\]]+/[^,\]]*", "event-replay-scratch-...", plan)
            f.write(f"== {name}\n{plan}\n")
    print(a.out)


if __name__ == "__main__":
    main()
