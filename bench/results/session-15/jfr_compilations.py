import json, sys, collections, re
def dur(s):
    m = re.match(r"PT(?:(\d+)M)?([\d.]+)S", s); return (int(m.group(1) or 0)*60 + float(m.group(2))) if m else 0
for f in sys.argv[1:]:
    ev = json.load(open(f))["recording"]["events"]
    tot = collections.Counter(); n = collections.Counter(); lvl = collections.Counter()
    for e in ev:
        v = e["values"]; t = v["method"]["type"]["name"]; d = dur(e["values"]["duration"]) if isinstance(v["duration"], str) else 0
        pkg = "generated" if "Generated" in t or "SpecificUnsafe" in t else "/".join(t.split("/")[:3])
        tot[pkg] += d; n[pkg] += 1; lvl[v["compileLevel"]] += d
    print(f, "events", len(ev), "sum s", round(sum(tot.values()),1), "by level", {k: round(x,1) for k,x in lvl.items()})
    for k, x in tot.most_common(15): print(f"  {x:7.2f} s {n[k]:6d}  {k}")
