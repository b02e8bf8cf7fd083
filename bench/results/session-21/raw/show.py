import json, sys
d = json.load(open(sys.argv[1]))
jobs = {s: j["jobId"] for j in d["jobs"] for s in j["stageIds"]}
tot = 0
for s in sorted(d["stages"], key=lambda s: s["stageId"]):
    if s["status"] == "SKIPPED":
        continue
    cpu = s["executorCpuTime"] / 1e9; tot += cpu
    print(f'{s["stageId"]:3d} job {jobs.get(s["stageId"], "?"):>3} {s["status"][:4]} tasks {s["numTasks"]:3d} run {s["executorRunTime"]/1e3:6.1f} cpu {cpu:6.1f} '
          f'gc {s.get("jvmGcTime",0)/1e3:5.1f} in {s["inputBytes"]>>20:5d} shw {s["shuffleWriteBytes"]>>20:5d} shr {s["shuffleReadBytes"]>>20:5d} '
          f'spill {s["diskBytesSpilled"]>>20:4d} {s["name"][:40]} {s.get("submissionTime","")[11:19]}-{s.get("completionTime","")[11:19]}')
print("executor CPU total", round(tot, 1))
