"""Run a command; print its wall seconds and the CPU seconds (user + system) of its whole process tree, the JVM
included (each process's last-seen cumulative CPU, sampled every 0.2 s: a JVM its parent does not wait for is not
in the rusage /usr/bin/time reads)."""
import subprocess, sys, time
import psutil

t0 = time.monotonic()
p = subprocess.Popen(sys.argv[1:])
root = psutil.Process(p.pid)
seen = {}
while p.poll() is None:
    try:
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        procs = []
    for q in procs:
        try:
            t = q.cpu_times()
            seen[(q.pid, q.create_time())] = t.user + t.system
        except psutil.NoSuchProcess:
            pass
    time.sleep(0.2)
print(f"cputree: rc {p.returncode}, wall {time.monotonic() - t0:.1f} s, CPU {sum(seen.values()):.1f} s "
      f"({len(seen)} processes)", file=sys.stderr, flush=True)
sys.exit(p.returncode)
