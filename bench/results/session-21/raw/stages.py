"""Poll the Spark UIs on ports 4040-4047 every 5 s; keep each event-replay-compare app's last stage list in
/tmp/t46f/ab/stages-<appid>.json (Spark UI REST /api/v1/applications/<id>/stages)."""
import json, time, urllib.request
while True:
    for port in range(4040, 4048):
        try:
            apps = json.load(urllib.request.urlopen(f"http://localhost:{port}/api/v1/applications", timeout=2))
        except Exception:
            continue
        for a in apps:
            if "compare" not in a["name"] and "report-steps" not in a["name"]:
                continue
            try:
                st = json.load(urllib.request.urlopen(
                    f"http://localhost:{port}/api/v1/applications/{a['id']}/stages?details=false", timeout=5))
                jobs = json.load(urllib.request.urlopen(
                    f"http://localhost:{port}/api/v1/applications/{a['id']}/jobs", timeout=5))
            except Exception:
                continue
            with open(f"/tmp/t46f/ab/stages-{a['id']}.json", "w") as f:
                json.dump({"stages": st, "jobs": jobs}, f)
    time.sleep(5)
