"""CPU seconds per JVM thread group of a command's process tree: where the time outside Spark's tasks goes.

    python bench/thread_cpu.py -- python bench/run.py worker --mode replay --config C --out O

Samples /proc/<pid>/task/*/stat of every java process under the command twice a second, keeps each thread's last
user+sys ticks (threads that end between samples lose at most half a second), and prints the CPU seconds per
thread group (the thread's name with digits removed: "C2 CompilerThre", "Executor task l", "GC Thread#", ...)
and the Python processes' CPU. A JIT compiler thread's or a GC thread's CPU is in no stage's executor CPU.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections import defaultdict

CLK = os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:  # the process ended between two reads
        return out
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out += [int(p) for p in fh.read().split()]
        except OSError:
            pass
    return out


def tree(pid: int) -> list[int]:
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += children(p)
    return seen


def comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return "?"


def thread_ticks(pid: int) -> dict[int, tuple[str, int]]:
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                s = fh.read()
        except OSError:
            continue
        name = s[s.index("(") + 1:s.rindex(")")]
        fields = s[s.rindex(")") + 2:].split()
        out[int(tid)] = (name, int(fields[11]) + int(fields[12]))
    return out


def main(argv: list[str]) -> int:
    cmd = argv[argv.index("--") + 1:] if "--" in argv else argv
    proc = subprocess.Popen(cmd)
    last: dict[tuple[int, int], tuple[str, int]] = {}
    while proc.poll() is None:
        for pid in tree(proc.pid):
            kind = comm(pid)
            try:
                for tid, (name, ticks) in thread_ticks(pid).items():
                    label = name if kind == "java" else f"[{kind}]"
                    last[(pid, tid)] = (label, ticks)
            except OSError:
                pass
        time.sleep(0.5)
    groups: dict[str, float] = defaultdict(float)
    for label, ticks in last.values():
        groups[re.sub(r"\d+", "", label).strip()] += ticks / CLK
    total = sum(groups.values())
    print(f"thread_cpu: {total:.1f} CPU s in all, exit {proc.returncode}", file=sys.stderr)
    for label, sec in sorted(groups.items(), key=lambda kv: -kv[1]):
        if sec >= 0.1:
            print(f"thread_cpu: {sec:8.1f} s  {label}", file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
