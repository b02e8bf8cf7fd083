import json, sys, glob, os, collections
d = sys.argv[1]
jobs = {}; stages = collections.Counter(); tasks=collections.Counter(); start=None; end=None
for f in sorted(glob.glob(os.path.join(d, "events_*"))):
    import subprocess
    for line in subprocess.run(["zstd","-dc","-q",f],capture_output=True,text=True).stdout.splitlines():
        if not line.strip(): continue
        try: e = json.loads(line)
        except Exception: continue
        ev = e["Event"]; ev = e["Event"]
        if ev == "SparkListenerApplicationStart": start = e["Timestamp"]
        if ev == "SparkListenerApplicationEnd": end = e["Timestamp"]
        if ev == "SparkListenerJobStart":
            jobs[e["Job ID"]] = {"start": e["Submission Time"], "stages": len(e["Stage IDs"]),
                                 "site": (e.get("Properties") or {}).get("callSite.short", "")}
        if ev == "SparkListenerJobEnd":
            jobs[e["Job ID"]]["end"] = e["Completion Time"]
        if ev == "SparkListenerStageCompleted":
            stages["done"] += 1; tasks["n"] += e["Stage Info"].get("Number of Tasks", 0)
t0 = start or min(j["start"] for j in jobs.values())
busy = sum(j["end"] - j["start"] for j in jobs.values() if "end" in j)
print(f"app {((end or 0)-t0)/1000:.1f}s jobs {len(jobs)} stages run {stages['done']} tasks {tasks['n']} busy-in-jobs {busy/1000:.1f}s")
if len(sys.argv) > 2:
    for jid, j in sorted(jobs.items()):
        print(f"{(j['start']-t0)/1000:8.2f} {(j.get('end',0)-j['start'])/1000:6.2f} st={j['stages']:2d} {j['site']}")
