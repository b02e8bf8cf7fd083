"""Replay a config in-process, then print the SQL operators' metrics (sort time, peak memory, rows) of each query."""
import json, sys, urllib.request, yaml
sys.path.insert(0, sys.argv[2])
from event_replay.spark import build_session
from event_replay.semantics.config import load_config
from event_replay.job import run_replay
spark = build_session(master="local[2]", app_name="sqlm", conf={"spark.driver.memory": "4g"})
cfg = load_config(sys.argv[1])
s = run_replay(spark, cfg)
print(s)
url, app = spark.sparkContext.uiWebUrl, spark.sparkContext.applicationId
qs = json.load(urllib.request.urlopen(f"{url}/api/v1/applications/{app}/sql?details=true&planDescription=false&length=1000"))
for q in qs:
    interesting = []
    for n in q.get("nodes", []):
        ms = {m["name"]: m["value"] for m in n.get("metrics", [])}
        keep = {k: v for k, v in ms.items() if any(w in k for w in ("time", "rows", "memory", "spill"))}
        if keep:
            interesting.append(f"    {n['nodeName']}: " + "; ".join(f"{k}={v}" for k, v in keep.items()))
    print(f"query {q['id']} {q['duration']} ms: {q['description'][:80]}")
    print("\n".join(interesting))
