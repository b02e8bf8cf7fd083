"""Compare two snapshots of out/demo_partitioned (the latest _airflow run of each): Parquet as tables, JSON without
paths/timings/run ids, PNG byte for byte, other text with run ids and roots normalised."""
import json, re, sys, os, glob
from pathlib import Path
import pandas as pd
a, b = Path(sys.argv[1]), Path(sys.argv[2])
def run_dir(root):
    runs = sorted(p for p in (root/"_airflow").iterdir() if p.name.startswith("manual__"))
    return runs[-1]
ra, rb = run_dir(a), run_dir(b)
def norm_text(s, root, run):
    s = s.replace(str(run), "<RUN>").replace(run.name, "<RUNID>").replace(str(root), "<ROOT>")
    s = re.sub(r"manual__[0-9T:_.+\-]+", "<RUNID>", s)
    s = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?", "<TS>", s)
    s = re.sub(r"\d{8}T\d{6}(\.\d+)?Z", "<TS>", s)
    s = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<UUID>", s)
    s = re.sub(r"'_run_time_sort': [0-9.]+", "'_run_time_sort': <T>", s)
    s = re.sub(r"manual__[0-9T%A-F_.]+", "<RUNID>", s)
    s = re.sub(r"/work/[^\s\"']*", "<PATH>", s); s = re.sub(r"/tmp/[^\s\"']*", "<PATH>", s)
    return s
TIMING = re.compile(r"(^commit$|^dirty$|^written$|^effective$|seconds|_s$|elapsed|duration|time_ms|started|finished|created|_at$|timestamp|run_time|wall)", re.I)
def norm_json(o, root, run):
    if isinstance(o, dict):
        return {k: norm_json(v, root, run) for k, v in o.items() if not TIMING.search(k) and not ("path" in k.lower() or k.lower().endswith("dir"))}
    if isinstance(o, list): return [norm_json(v, root, run) for v in o]
    if isinstance(o, str): return norm_text(o, root, run)
    return o
def files(root, sub):
    base = root/sub
    out = {}
    for p in base.rglob("*"):
        if p.is_file() and not p.name.startswith(".") and not p.name.endswith(".crc") and p.name != "_SUCCESS":
            rel = p.relative_to(base)
            rel_s = re.sub(r"manual__[^/]*", "<RUNID>", str(rel)); rel_s = re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "<UUID>", rel_s)
            rel_s = re.sub(r"\d{8}T\d{6}(\.\d+)?Z", "<TS>", rel_s)
            out.setdefault(rel_s, []).append(p)
    return out
def tables(paths):
    return paths
report = {"same": 0, "differ": []}
pairs = [(a, a, b, b, d) for d in ["windows", "late_events", "watermarks", "quarantine", "counts", "_state", "_tuning"]]
pairs += [(ra, a, rb, b, d) for d in ["compare", "why_report", "_data_docs", "."]]
for ba, roota, bb, rootb, sub in pairs:
    fa, fb = files(ba, sub) if sub != "." else {k:v for k,v in files(ba, ".").items() if "/" not in k}, None
    fb = files(bb, sub) if sub != "." else {k:v for k,v in files(bb, ".").items() if "/" not in k}
    if set(fa) != set(fb):
        report["differ"].append((sub, "file sets", sorted(set(fa) ^ set(fb))[:10]))
    # parquet datasets: compare per directory as tables
    pq_dirs = {}
    for k in sorted(set(fa) & set(fb)):
        if len(fa[k]) != len(fb[k]):
            report["differ"].append((sub, k, "count")); continue
        for pa, pb in zip(sorted(fa[k]), sorted(fb[k])):
            ext = pa.suffix
            if ext == ".parquet":
                pq_dirs.setdefault(str(pa.parent.relative_to(ba)), (pa.parent, pb.parent)); continue
            if ext == ".png":
                ok = pa.read_bytes() == pb.read_bytes()
            elif ext == ".json":
                try:
                    ok = norm_json(json.loads(pa.read_text()), roota, ra) == norm_json(json.loads(pb.read_text()), rootb, rb)
                except Exception:
                    ok = norm_text(pa.read_text(), roota, ra) == norm_text(pb.read_text(), rootb, rb)
            else:
                try:
                    ta, tb = pa.read_text(), pb.read_text()
                    ok = norm_text(ta, roota, ra) == norm_text(tb, rootb, rb)
                except UnicodeDecodeError:
                    ok = pa.read_bytes() == pb.read_bytes()
            if ok: report["same"] += 1
            else: report["differ"].append((sub, k))
    for rel, (da, db) in pq_dirs.items():
        def rd(d):
            fs = sorted(d.glob("*.parquet"))
            return pd.concat([pd.read_parquet(f) for f in fs], ignore_index=True) if fs else pd.DataFrame()
        ta = rd(da); tb = rd(db)
        cols = list(ta.columns)
        try:
            ta = ta.sort_values(cols).reset_index(drop=True); tb = tb[cols].sort_values(cols).reset_index(drop=True)
            ok = ta.equals(tb)
        except Exception as e:
            ok = ta.astype(str).sort_values(cols).reset_index(drop=True).equals(tb[cols].astype(str).sort_values(cols).reset_index(drop=True))
        if ok: report["same"] += 1
        else: report["differ"].append((sub, rel, "parquet table"))
print("compared", ra.name, "vs", rb.name)
print("same:", report["same"], "differ:", len(report["differ"]))
for d in report["differ"][:60]: print("  DIFF", d)
