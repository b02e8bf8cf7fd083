"""Summarises a Spark event log (spark.eventLog.enabled) into markdown: where a replay's time goes.

    python bench/profile_eventlog.py EVENTLOG_FILE [--plans PLANS.txt]

- per SQL execution (each output write, each cached stage materialised): wall time and what its physical plan
  contains (exchanges by partitioning, windows, sorts, joins, Python evaluation nodes, cache scans);
- the slowest stages: tasks, wall time, summed task time and CPU, rows in, shuffle bytes, spills; single-task
  stages are the ones that run on one core whatever the cluster (a SinglePartition exchange, a window without
  PARTITION BY, a global sort/limit);
- the Python-side metrics Spark records for Python UDF / pandas nodes.
The full physical plans go to --plans (default: next to the event log, <name>-plans.txt).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

PLAN_NODES = {
    "Exchange hashpartitioning": r"Exchange hashpartitioning",
    "Exchange SinglePartition": r"Exchange SinglePartition",
    "Exchange rangepartitioning": r"Exchange rangepartitioning",
    "Exchange RoundRobin": r"Exchange RoundRobinPartitioning",
    "Window": r"(?<![A-Za-z])Window \[",
    "Window w/o PARTITION BY": r"(?<![A-Za-z])Window \[.*\], \[\], \[",
    "Sort": r"(?<![A-Za-z])Sort \[",
    "SortMergeJoin": r"SortMergeJoin",
    "BroadcastHashJoin": r"BroadcastHashJoin",
    "BroadcastNestedLoopJoin": r"BroadcastNestedLoopJoin",
    "CartesianProduct": r"CartesianProduct",
    "HashAggregate": r"HashAggregate\(",
    "SortAggregate": r"SortAggregate\(",
    "Expand": r"(?<![A-Za-z])Expand \[",
    "Generate (explode)": r"(?<![A-Za-z])Generate ",
    "Python: BatchEvalPython": r"BatchEvalPython",
    "Python: ArrowEvalPython": r"ArrowEvalPython",
    "Python: FlatMapGroupsIn*": r"FlatMapGroupsIn(Pandas|Arrow)",
    "Python: FlatMapCoGroupsIn*": r"FlatMapCoGroupsIn(Pandas|Arrow)",
    "Python: MapIn*": r"(?<![A-Za-z])MapIn(Pandas|Arrow)",
    "Python: window UDF": r"WindowInPandas|ArrowWindowPython",
    "InMemoryTableScan (cache)": r"InMemoryTableScan",
    "FileScan parquet": r"FileScan parquet",
}
STAGE_METRICS = {
    "internal.metrics.executorRunTime": ("task_s", 1e-3),
    "internal.metrics.executorCpuTime": ("cpu_s", 1e-9),
    "internal.metrics.jvmGCTime": ("gc_s", 1e-3),
    "internal.metrics.input.recordsRead": ("rows_in", 1),
    "internal.metrics.shuffle.read.recordsRead": ("shuffle_rows_in", 1),
    "internal.metrics.shuffle.write.bytesWritten": ("shuffle_write_b", 1),
    "internal.metrics.shuffle.write.recordsWritten": ("shuffle_rows_out", 1),
    "internal.metrics.memoryBytesSpilled": ("spill_mem_b", 1),
    "internal.metrics.diskBytesSpilled": ("spill_disk_b", 1),
}
PY_METRIC = re.compile(r"python|arrow|pandas", re.I)


def _mb(b) -> str:
    return f"{b / 2**20:.1f}" if b else "0"


def load(path: Path):
    sql, stages, stage_sql = {}, {}, {}
    py_metrics = defaultdict(float)
    with open(path) as fh:
        for line in fh:
            e = json.loads(line)
            kind = e["Event"].rsplit(".", 1)[-1]
            if kind == "SparkListenerSQLExecutionStart":
                sql[e["executionId"]] = {"start": e["time"], "desc": e.get("description", ""),
                                         "plan": e.get("physicalPlanDescription", ""), "end": None}
            elif kind == "SparkListenerSQLAdaptiveExecutionUpdate":
                if e["executionId"] in sql:
                    sql[e["executionId"]]["plan"] = e.get("physicalPlanDescription", sql[e["executionId"]]["plan"])
            elif kind == "SparkListenerSQLExecutionEnd":
                if e["executionId"] in sql:
                    sql[e["executionId"]]["end"] = e["time"]
            elif kind == "SparkListenerJobStart":
                ex = (e.get("Properties") or {}).get("spark.sql.execution.id")
                for sid in e.get("Stage IDs", []):
                    stage_sql[sid] = int(ex) if ex is not None else None
            elif kind == "SparkListenerStageCompleted":
                si = e["Stage Info"]
                st = {"id": si["Stage ID"], "name": si.get("Stage Name", ""), "tasks": si.get("Number of Tasks", 0),
                      "wall_s": ((si.get("Completion Time") or 0) - (si.get("Submission Time") or 0)) / 1000}
                for acc in si.get("Accumulables", []):
                    name, val = acc.get("Name", ""), acc.get("Value")
                    if name in STAGE_METRICS:
                        k, scale = STAGE_METRICS[name]
                        st[k] = float(val) * scale
                    elif PY_METRIC.search(name) and isinstance(val, (int, float, str)):
                        try:
                            py_metrics[name] += float(val)
                        except ValueError:
                            pass
                stages[st["id"]] = st
    for sid, st in stages.items():
        st["sql"] = stage_sql.get(sid)
    return sql, stages, py_metrics


def summarise_eventlog(path: Path, plans_out: Path | None = None) -> str:
    sql, stages, py_metrics = load(Path(path))
    plans_out = plans_out or Path(path).with_name(Path(path).name.split(".")[0] + "-plans.txt")
    out = []
    total_stage = sum(s["wall_s"] for s in stages.values())
    total_task = sum(s.get("task_s", 0) for s in stages.values())
    out.append(f"{len(sql)} SQL executions, {len(stages)} stages; stage wall time summed {total_stage:.1f} s, "
               f"task time summed {total_task:.1f} s (2 cores: task time / 2 is the floor of the wall time).\n")
    out.append("## SQL executions (one per Spark action: output writes, counts, min/max collects)\n")
    out.append("| exec | wall s | stages | task s | 1-task stages | plan contains |")
    out.append("|---:|---:|---:|---:|---:|---|")
    plans = []
    for ex, q in sorted(sql.items()):
        sts = [s for s in stages.values() if s["sql"] == ex]
        wall = ((q["end"] or q["start"]) - q["start"]) / 1000
        counts = Counter({k: len(re.findall(p, q["plan"].split("\n\n")[0], re.M)) for k, p in PLAN_NODES.items()})
        contains = ", ".join(f"{k} x{v}" for k, v in counts.items() if v)
        single = sum(1 for s in sts if s["tasks"] == 1)
        out.append(f"| {ex} | {wall:.1f} | {len(sts)} | {sum(s.get('task_s', 0) for s in sts):.1f} | {single} | "
                   f"{contains or '-'} |")
        plans.append(f"===== SQL execution {ex}: {wall:.1f} s — {q['desc'][:200]}\n{q['plan']}\n")
    Path(plans_out).write_text("\n".join(plans))
    out.append(f"\nFull physical plans: `{plans_out}`.\n")
    out.append("## Slowest stages\n")
    out.append("| stage | exec | tasks | wall s | task s | CPU s | GC s | rows in | shuffle rows in | shuffle write MB | "
               "spill MB (disk) | name |")
    out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for s in sorted(stages.values(), key=lambda s: -s["wall_s"])[:20]:
        out.append(f"| {s['id']} | {s['sql']} | {s['tasks']} | {s['wall_s']:.1f} | {s.get('task_s', 0):.1f} | "
                   f"{s.get('cpu_s', 0):.1f} | {s.get('gc_s', 0):.1f} | {int(s.get('rows_in', 0)):,} | "
                   f"{int(s.get('shuffle_rows_in', 0)):,} | {_mb(s.get('shuffle_write_b', 0))} | "
                   f"{_mb(s.get('spill_disk_b', 0))} | {s['name'][:60]} |")
    single = [s for s in stages.values() if s["tasks"] == 1]
    out.append(f"\nSingle-task stages: {len(single)} of {len(stages)}, wall {sum(s['wall_s'] for s in single):.1f} s "
               f"summed (task time {sum(s.get('task_s', 0) for s in single):.1f} s).\n")
    if py_metrics:
        out.append("## Python-side metrics (summed over stages)\n")
        for k, v in sorted(py_metrics.items()):
            out.append(f"- {k}: {v:,.0f}")
        out.append("")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("eventlog")
    ap.add_argument("--plans", default=None)
    a = ap.parse_args(argv)
    print(summarise_eventlog(Path(a.eventlog), Path(a.plans) if a.plans else None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
