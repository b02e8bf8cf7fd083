"""Profile a running Spark application through its UI's REST API (the alternative to an event log).

    python bench/profile_rest.py --port 4043 --out bench/results/rest-1m.json   # polls until the app ends
    python bench/profile_rest.py --summarise bench/results/rest-1m.json          # markdown, like profile_eventlog

Polls /applications/<id>/{stages,jobs,sql} every --every seconds and keeps the last complete snapshot, so the
numbers are those of the last poll before the application stopped (at most --every seconds short).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_eventlog import PLAN_NODES, _mb  # noqa: E402

import re  # noqa: E402


def _get(url: str):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def poll(port: int, out: Path, every: float, app_name: str | None) -> None:
    base = f"http://localhost:{port}/api/v1/applications"
    apps = _get(base)
    app = next(a for a in apps if app_name is None or a["name"] == app_name)
    url = f"{base}/{app['id']}"
    while True:
        try:
            snap = {"app": app, "time": time.time(), "stages": _get(f"{url}/stages"), "jobs": _get(f"{url}/jobs"),
                    "sql": _get(f"{url}/sql?details=true&planDescription=true&length=1000")}
        except Exception:  # noqa: BLE001 - the app stopped: keep the last snapshot
            return
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(snap))
        tmp.replace(out)
        time.sleep(every)


def summarise(path: Path) -> str:
    snap = json.loads(Path(path).read_text())
    stages, jobs, sql = snap["stages"], snap["jobs"], snap["sql"]
    job_stages = {j["jobId"]: j.get("stageIds", []) for j in jobs}
    stage_sql = {}
    for q in sql:
        for jid in q.get("successJobIds", []) + q.get("runningJobIds", []) + q.get("failedJobIds", []):
            for sid in job_stages.get(jid, []):
                stage_sql[sid] = q["id"]
    done = [s for s in stages if s["status"] == "COMPLETE"]
    out = []
    tot_task = sum(s["executorRunTime"] for s in done) / 1000
    tot_cpu = sum(s["executorCpuTime"] for s in done) / 1e9
    out.append(f"{len(sql)} SQL executions, {len(done)} completed stages ({sum(s['numTasks'] for s in done)} tasks); "
               f"task time summed {tot_task:.1f} s, task CPU summed {tot_cpu:.1f} s.\n")
    out.append("## SQL executions (one per Spark action)\n")
    out.append("| exec | status | wall s | stages | tasks | task s | task CPU s | 1-task stages | plan contains | "
               "action |")
    out.append("|---:|---|---:|---:|---:|---:|---:|---:|---|---|")
    for q in sql:
        sts = [s for s in done if stage_sql.get(s["stageId"]) == q["id"]]
        plan = (q.get("planDescription") or "").split("\n\n")[0]
        counts = Counter({k: len(re.findall(p, plan, re.M)) for k, p in PLAN_NODES.items()})
        contains = ", ".join(f"{k} x{v}" for k, v in counts.items() if v)
        out.append(f"| {q['id']} | {q['status']} | {q['duration'] / 1000:.1f} | {len(sts)} | "
                   f"{sum(s['numTasks'] for s in sts)} | {sum(s['executorRunTime'] for s in sts) / 1000:.1f} | "
                   f"{sum(s['executorCpuTime'] for s in sts) / 1e9:.1f} | {sum(1 for s in sts if s['numTasks'] == 1)} | "
                   f"{contains or '-'} | {q['description'][:50]} |")
    out.append("\n## Slowest stages (by summed task time)\n")
    out.append("| stage | exec | tasks | task s | task CPU s | rows in | shuffle rows in | shuffle write MB | spill MB |")
    out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in sorted(done, key=lambda s: -s["executorRunTime"])[:15]:
        out.append(f"| {s['stageId']} | {stage_sql.get(s['stageId'])} | {s['numTasks']} | "
                   f"{s['executorRunTime'] / 1000:.1f} | {s['executorCpuTime'] / 1e9:.1f} | {s['inputRecords']:,} | "
                   f"{s['shuffleReadRecords']:,} | {_mb(s['shuffleWriteBytes'])} | {_mb(s['diskBytesSpilled'])} |")
    many = [s for s in done if s["numTasks"] >= 200]
    tiny = [s for s in many if s["executorRunTime"] / max(1, s["numTasks"]) < 2000]
    out.append(f"\nStages with >= 200 tasks: {len(many)} ({sum(s['executorRunTime'] for s in many) / 1000:.1f} task-s); "
               f"single-task stages: {sum(1 for s in done if s['numTasks'] == 1)}.\n")
    py = Counter()
    for q in sql:
        for node in q.get("nodes", []):
            if re.search(r"Python|Arrow|Pandas", node.get("nodeName", "")):
                py[node["nodeName"]] += 1
    if py:
        out.append("Python plan nodes: " + ", ".join(f"{k} x{v}" for k, v in py.items()) + "\n")
    del tiny
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int)
    ap.add_argument("--app-name", default=None)
    ap.add_argument("--out")
    ap.add_argument("--every", type=float, default=10)
    ap.add_argument("--summarise")
    ap.add_argument("--plans", default=None, help="with --summarise: write the physical plans here")
    a = ap.parse_args(argv)
    if a.summarise:
        print(summarise(Path(a.summarise)))
        if a.plans:
            snap = json.loads(Path(a.summarise).read_text())
            Path(a.plans).write_text("\n".join(f"===== SQL execution {q['id']} ({q['duration'] / 1000:.1f} s): "
                                               f"{q['description'][:120]}\n{q.get('planDescription', '')}\n"
                                               for q in snap["sql"]))
        return 0
    poll(a.port, Path(a.out), a.every, a.app_name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
