"""Count Exchanges of the comparison's counts job plan (planning only)."""
import sys
from event_replay.spark import build_session
from event_replay.semantics.config import load_config
from event_replay.compare.live_spec import LiveSpec
from event_replay.compare.replay_side import read_replay, Scope
from event_replay.compare.live import read_live
from event_replay.compare.rules import rules_for
from event_replay.compare.matching import match_windows
from event_replay.compare.classify import classify_windows, partition_count_frames
from event_replay.spark_jobs import one_job_plans
from event_replay import engine
spark = build_session(app_name="plan")
cfg = load_config(sys.argv[1])
spec = LiveSpec(path=sys.argv[2], format="parquet", keeps_updates=True)
engine.fixed_plans(spark)
with one_job_plans(spark):
    replay = read_replay(spark, cfg, Scope())
    from event_replay.compare import live as L
    live = L.read_live(spark, spec, cfg, replay.types)
    rules = rules_for(cfg.aggregations, replay.types, live.aggregates, "unknown", 1e-9)
    m = match_windows(replay.firings, live.firings, rules, live.has, True)
    w = classify_windows(m, live.aggregates, Scope(), True)
    plan = w._jdf.queryExecution().executedPlan().toString()
    print(plan)
    print("EXCHANGES", plan.count("Exchange"))
