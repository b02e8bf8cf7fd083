import re, sys, datetime as dt
def ts(s): return dt.datetime.strptime(s[:26].rstrip('Z'), "%Y-%m-%dT%H:%M:%S.%f")
for f in sys.argv[1:]:
    marks = []
    for line in open(f):
        m = re.match(r"^(\S+Z) .*?\[DAG TEST\] starting task_id=(\w+)", line)
        if m: marks.append((m.group(2), ts(m.group(1))))
        m = re.match(r"^(\S+Z) .*?DagRun Finished", line)
        if m: marks.append(("end", ts(m.group(1))))
        m = re.match(r"^(\S+Z) \[info\s*\] compare: windows", line)
        if m: marks.append(("calibration", ts(m.group(1))))
    out = []
    for (a, t1), (b, t2) in zip(marks, marks[1:]):
        out.append(f"{a} {(t2-t1).total_seconds():.1f}")
    print(f.split('/')[-1], "|", ", ".join(out))
