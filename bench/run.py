"""Benchmark: exact replay vs naive Spark aggregation vs the Flink job vs a scan floor, on the same log and machine.

    python bench/run.py --rows 1000000 --rows 10000000 [--reps 3] [--modes replay,naive,flink,scan]
    python bench/run.py --rows 1000000 --profile        # one replay with a Spark event log -> profile summary

Every measurement runs in a fresh child process (one JVM each, so start-up and peak memory are per run and the runs
cannot warm each other up); repetitions are interleaved across modes (rep 1 of every mode, then rep 2, ...) so a
change of machine load hits all modes alike. Per run it records:
- job seconds: the work only (Spark: after the session is up, until the outputs are written; Flink: env.execute());
- total seconds: the whole child process, JVM start-up included;
- CPU seconds: user+sys of the child's process tree (JVM, Python driver, Python workers), sampled from /proc;
- peak RSS of the Python driver, of the JVM (VmHWM of the java process: driver and executors in local mode; the
  Flink MiniCluster's JVM), and of the largest Python worker (pyspark daemon) if any.
Modes:
- replay: the exact replay, in-process through `event_replay.job.run_replay` (what `replay run` calls) on a
  session from `event_replay.spark.build_session` (what `replay run` builds) with --master and --driver-memory, and
  the driver JVM `replay run` starts for this input (event_replay/driver_jvm.py: the class archive, the quick
  compiler for a small input);
- naive:  the same tumbling windows and aggregates as a plain Spark groupBy(key, window(event_time)), ignoring
  watermarks, lateness and idleness, written to Parquet, on the driver JVM a plain Spark job gets (`worker --jvm
  plain`, the default of every mode but replay: the JDK's own class archive and compiler);
- flink:  the Flink 2.3 job (bench/flink: FileSource -> Flink's watermark generators/idleness/multiplexer on the
  replay clock -> keyed windows with allowed lateness and late side output, the config's aggregates incrementally
  over the value's type) on the same rows, from the events file bench/flink/prepare.py makes (made once per log and
  format, timed separately);
- scan:   the floor: read the six columns (forced through a `noop` write) and count.
Results: bench/results/<rows>.json (every run) and bench/results/table.md (medians). No timing is asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(BENCH))

import yaml  # noqa: E402

MODES = ("replay", "naive", "flink", "scan")
CLK = os.sysconf("SC_CLK_TCK")


# -- measuring a process tree -------------------------------------------------------------------------

def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


class TreeSampler(threading.Thread):
    """Samples a process and its descendants every `period` s: peak VmHWM and last CPU ticks per pid."""

    def __init__(self, root_pid: int, period: float = 0.5):
        super().__init__(daemon=True)
        self.root, self.period = root_pid, period
        self.procs: dict[int, dict] = {}
        self._halt = threading.Event()

    def _tree(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                stat = _read(f"/proc/{d}/stat")
                if stat:
                    ppid = int(stat[stat.rindex(")") + 2:].split()[1])
                    children.setdefault(ppid, []).append(int(d))
        out, todo = [], [self.root]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(children.get(p, ()))
        return out

    def sample(self) -> None:
        for pid in self._tree():
            stat, status = _read(f"/proc/{pid}/stat"), _read(f"/proc/{pid}/status")
            if not stat or not status:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            cpu = (int(fields[11]) + int(fields[12])) / CLK  # utime + stime
            hwm = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
            p = self.procs.setdefault(pid, {"comm": comm, "hwm_kb": 0, "cpu": 0.0})
            p["comm"], p["hwm_kb"], p["cpu"] = comm, max(p["hwm_kb"], hwm), max(p["cpu"], cpu)

    def run(self) -> None:
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.period)

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def summary(self) -> dict:
        def mb(kb):
            return round(kb / 1024, 1)
        java = [p for p in self.procs.values() if p["comm"] == "java"]
        pys = [p for pid, p in self.procs.items() if pid != self.root and p["comm"].startswith("python")]
        root = self.procs.get(self.root, {"hwm_kb": 0})
        return {"cpu_s": round(sum(p["cpu"] for p in self.procs.values()), 2),
                "jvm_peak_mb": mb(max((p["hwm_kb"] for p in java), default=0)),
                "driver_peak_mb": mb(root["hwm_kb"]) if root.get("comm", "") != "java" else None,
                "pyworker_peak_mb": mb(max((p["hwm_kb"] for p in pys), default=0)) or None,
                "processes": len(self.procs)}


def tree_cpu(root: int) -> float:
    """CPU seconds (user+sys) used so far by a process and its live descendants."""
    t = TreeSampler(root)
    t.sample()
    return sum(p["cpu"] for p in t.procs.values())


def run_measured(cmd: list[str], *, cwd: Path = ROOT, timeout: float = 3600, env: dict | None = None) -> dict:
    """Runs cmd, sampling its process tree; returns total seconds, tree metrics, stdout/stderr tails, exit code."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    finally:
        sampler.stop()
    total = time.monotonic() - t0
    return {"rc": proc.returncode, "total_s": round(total, 2), **sampler.summary(), "stdout": out, "stderr": err[-3000:]}


# -- workers (run in the child process) -------------------------------------------------------------

def _session(args, cfg):
    from event_replay.spark import build_session
    # "default": what `replay run` would use (build_session sizes a local driver itself).
    conf = {} if args.driver_memory == "default" else {"spark.driver.memory": args.driver_memory}
    if args.event_log:
        Path(args.event_log).mkdir(parents=True, exist_ok=True)
        conf.update({"spark.eventLog.enabled": "true", "spark.eventLog.dir": str(Path(args.event_log).resolve())})
    return build_session(master=args.master, app_name=f"bench-{args.mode}", conf={**conf, **jvm_conf(args.jvm)},
                         input_bytes=_input_bytes(args.jvm, cfg))


def jvm_conf(jvm: str) -> dict[str, str]:
    """`plain`: the driver JVM a plain Spark job gets (the JDK's own class archive, its default compiler), not
    the project's start-up (event_replay/driver_jvm.py: its class archive, the quick compiler for a small input),
    which `product` gives, as `replay run` does."""
    if jvm == "product":
        return {}
    from event_replay.class_archive import java_binary
    jdk_archive = Path(java_binary()).parents[1] / "lib" / "server" / "classes.jsa"
    return {"spark.driver.extraJavaOptions": f"-XX:SharedArchiveFile={jdk_archive}"}


def _input_bytes(jvm: str, cfg) -> int | None:
    from event_replay.io.files import input_bytes
    return input_bytes(cfg.source.path) if jvm == "product" else None


def worker(args) -> int:
    from event_replay.semantics.config import load_config
    cfg = load_config(args.config)
    t0 = time.monotonic()
    spark = _session(args, cfg)
    t1 = time.monotonic()
    cpu1 = tree_cpu(os.getpid())  # after start-up: the job's own CPU is the difference
    info: dict = {}
    if args.mode == "replay":
        from event_replay.job import run_replay
        s = run_replay(spark, cfg)
        info = {"rows_in": s.rows_read, "firings": s.firings, "late_rows": s.late_rows}
    elif args.mode == "naive":
        info = naive(spark, cfg, args.out)
    elif args.mode == "scan":
        info = scan(spark, cfg)
    else:
        raise SystemExit(f"unknown worker mode {args.mode}")
    t2 = time.monotonic()
    cpu2 = tree_cpu(os.getpid())
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    spark.stop()
    # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over fork and exec, so a child started by a runner
    # that had generated a big log reported the runner's peak, the same for every mode.
    hwm_kb = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
                  if line.startswith("VmHWM:"))
    print("BENCH_RESULT " + json.dumps({"job_s": round(t2 - t1, 2), "session_s": round(t1 - t0, 2), "job_cpu_s": round(cpu2 - cpu1, 2),
                                        "jvm_pid": jvm_pid, "driver_peak_mb": round(hwm_kb / 1024, 1),
                                        **info}), flush=True)
    return 0


def naive(spark, cfg, out: str) -> dict:
    """The same windows and aggregates as a plain Spark aggregation: no watermarks, no lateness, no idleness."""
    from pyspark.sql import functions as F
    c, w = cfg.source.columns, cfg.window
    df = spark.read.parquet(cfg.source.path)
    et = F.col(c["event_time"])
    if w.type == "tumbling":
        win = F.window(et, f"{w.size_ms} milliseconds", startTime=f"{w.offset_ms} milliseconds")
    elif w.type == "sliding":
        win = F.window(et, f"{w.size_ms} milliseconds", f"{w.slide_ms} milliseconds", f"{w.offset_ms} milliseconds")
    else:
        win = F.session_window(et, f"{w.gap_ms} milliseconds")
    aggs = [F.expr(e).alias(n) for n, e in cfg.aggregations.items()]
    res = (df.groupBy(F.col(c["key"]).alias("key"), win.alias("w")).agg(*aggs)
           .select("key", F.col("w.start").alias("window_start"), F.col("w.end").alias("window_end"),
                   *cfg.aggregations.keys()))
    res.write.mode("overwrite").parquet(out)
    return {"firings": spark.read.parquet(out).count()}  # metadata only: the number of window rows written


def scan(spark, cfg) -> dict:
    """The floor: read every column the replay reads (a noop write materialises them), then count."""
    c = cfg.source.columns
    cols = [c[r] for r in ("split", "offset", "arrival_time", "event_time", "key")] + ["value"]
    df = spark.read.parquet(cfg.source.path).select(*cols)
    df.write.format("noop").mode("overwrite").save()
    return {"rows_in": df.count()}


# -- orchestration --------------------------------------------------------------------------------------

def label(rows: int) -> str:
    for unit, div in (("g", 10**9), ("m", 10**6), ("k", 10**3)):
        if rows % div == 0:
            return f"{rows // div}{unit}"
    return str(rows)


def shape_label(rows: int, args) -> str:
    """The name of a size's results and outputs: "10m" for the headline, "bursty-10m" for the bursty shape."""
    shape = getattr(args, "shape", "headline")
    return label(rows) if shape == "headline" else f"{shape}-{label(rows)}"


def ensure_log(rows: int, args) -> Path:
    """The log of `args.shape` (headline: generate.py; bursty: bursty.py) with `rows` rows, generated once."""
    if getattr(args, "shape", "headline") in ("bursty", "bursty-int"):
        from bursty import BurstyProfile, chunks
        from generate import write_chunks
        p = BurstyProfile(rows=rows, seed=args.seed, int_values=args.shape == "bursty-int")
        path, meta = Path(args.data_dir) / f"{args.shape}-{label(rows)}", {"shape": "bursty", "profile": p.__dict__}
        write = lambda: write_chunks(path, chunks(p), meta)  # noqa: E731
    else:
        from generate import Profile, write_log
        p = Profile(rows=rows, seed=args.seed)
        path, meta = Path(args.data_dir) / f"log-{label(rows)}", {"profile": p.__dict__}
        write = lambda: write_log(path, p)  # noqa: E731
    manifest = path / "_bench.json"
    if manifest.exists() and all(json.loads(manifest.read_text()).get(k) == json.loads(json.dumps(v))
                                 for k, v in meta.items()):
        return path
    print(f"bench: generating {rows} rows -> {path}", file=sys.stderr, flush=True)
    write()
    return path


def default_config(args) -> str:
    """The job config of the shape unless --config names one."""
    shape = getattr(args, "shape", "headline")
    return args.config or str(BENCH / "configs" / f"{'bursty' if shape.startswith('bursty') else shape}.yaml")


def job_config(log: Path, out: Path, args) -> Path:
    raw = yaml.safe_load(Path(args.config).read_text())
    raw["source"]["path"] = str(log.resolve())
    raw["output"]["path"] = str(out.resolve())
    cfg_path = Path(args.out_dir) / f"job-{log.name}.yaml"
    cfg_path.parent.mkdir(parents=True, exist_ok=True)
    cfg_path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return cfg_path


def ensure_flink_input(log: Path, cfg_path: Path, args) -> tuple[Path, dict]:
    """Events file for the Flink job, made once per (log, config); returns its dir and the prepare info."""
    fdir = Path(args.data_dir) / f"flink-{log.name}"
    stamp = fdir / "prepared.json"
    manifest = json.loads((log / "_bench.json").read_text())
    from flink.prepare import FORMAT_VERSION, prepare
    key = {"log": manifest.get("profile", {k: v for k, v in manifest.items() if k != "seconds"}),
           "config": cfg_path.read_text(), "format": FORMAT_VERSION}
    if stamp.exists() and json.loads(stamp.read_text()).get("key") == key:
        return fdir, json.loads(stamp.read_text())["info"]
    from event_replay.semantics.config import load_config
    t0 = time.monotonic()
    info = prepare(load_config(cfg_path), fdir)
    info["seconds"] = round(time.monotonic() - t0, 2)
    stamp.write_text(json.dumps({"key": key, "info": info}))
    return fdir, info


def flink_classpath() -> str:
    env = {**os.environ}
    if "UV" not in env:
        for uv in (ROOT / ".tools" / "bin" / "uv", Path("/tmp/uvtool/bin/uv")):
            if uv.exists():
                env["UV"] = str(uv)
                break
    subprocess.run(["bash", str(BENCH / "flink" / "build.sh")], check=True, env=env)
    return (BENCH / ".build" / "flink" / "classpath.txt").read_text().strip()


def one_run(mode: str, rows: int, log: Path, cfg_path: Path, args, *, flink_dir: Path | None = None,
            classpath: str | None = None, event_log: str | None = None) -> dict:
    out = Path(args.out_dir) / f"{mode}-{shape_label(rows, args)}"
    if mode == "flink":
        shutil.rmtree(out, ignore_errors=True)
        cmd = ["java", f"-Xmx{args.flink_heap}", "-cp", classpath, "replaybench.BenchMain",
               str(flink_dir / "events.bin"), str(flink_dir / "events.properties"), str(out), str(args.flink_parallelism)]
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "worker", "--mode", mode, "--config", str(cfg_path),
               "--master", args.master, "--driver-memory", args.driver_memory, "--out", str(out)]
        if event_log:
            cmd += ["--event-log", event_log]
    load0 = os.getloadavg()[0]
    r = run_measured(cmd, timeout=args.timeout)
    r.update({"mode": mode, "rows": rows, "load1_start": round(load0, 1), "load1_end": round(os.getloadavg()[0], 1)})
    if r["rc"] != 0:
        raise RuntimeError(f"{mode} at {rows} rows failed (exit {r['rc']}):\n{r['stderr']}")
    if mode == "flink":
        line = next(x for x in r["stdout"].splitlines() if x.startswith("flink-bench "))
        kv = dict(p.split("=") for p in line.split()[1:])
        r.update({"job_s": float(kv["seconds"]), "job_cpu_s": float(kv["cpu_seconds"]) if "cpu_seconds" in kv else None, "firings": int(kv["firings"]), "late_rows": int(kv["late"]),
                  "rows_in": rows})
    else:
        line = next(x for x in r["stdout"].splitlines() if x.startswith("BENCH_RESULT "))
        res = json.loads(line[len("BENCH_RESULT "):])
        r.update(res)
    del r["stdout"]
    return r


def med(runs: list[dict], key: str):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return round(statistics.median(vals), 2) if vals else None


def summarise(rows: int, runs: list[dict], prep: dict | None) -> dict:
    by = {m: [r for r in runs if r["mode"] == m] for m in MODES}
    s = {"rows": rows, "modes": {}}
    for m, rs in by.items():
        if rs:
            s["modes"][m] = {k: med(rs, k) for k in ("job_s", "job_cpu_s", "total_s", "cpu_s", "driver_peak_mb", "jvm_peak_mb",
                                                     "pyworker_peak_mb", "firings", "late_rows")}
            s["modes"][m]["runs"] = len(rs)
            s["modes"][m]["job_s_all"] = [r["job_s"] for r in rs]
            s["modes"][m]["load1"] = [r["load1_start"] for r in rs]
    s["ratios"] = {}
    for unit in ("job_s", "job_cpu_s"):
        j = {m: v[unit] for m, v in s["modes"].items() if v[unit]}
        ratio = lambda a, b: round(j[a] / j[b], 2) if a in j and b in j else None  # noqa: E731
        suffix = "" if unit == "job_s" else " cpu"
        s["ratios"].update({"replay/naive" + suffix: ratio("replay", "naive"),
                            "flink/replay" + suffix: ratio("flink", "replay"),
                            "replay/scan" + suffix: ratio("replay", "scan")})
    s["flink_prepare"] = prep
    return s


def table(summaries: list[dict]) -> str:
    head = ("| rows | mode | job wall s (median) | rows/s (wall) | job CPU s | rows per CPU s | total wall s incl. "
            "JVM start | total CPU s | driver peak MB | JVM peak MB | Py worker peak MB | firings | late rows | "
            "job wall s, all runs | load avg at start |\n"
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
    lines, ratios = [], []
    for s in summaries:
        for m, v in s["modes"].items():
            rps = f"{s['rows'] / v['job_s']:,.0f}" if v["job_s"] else "-"
            jc = v.get("job_cpu_s")
            rpc = f"{s['rows'] / jc:,.0f}" if jc else "-"
            lines.append(f"| {s['rows']:,} | {m} | {v['job_s']} | {rps} | {jc or '-'} | {rpc} | {v['total_s']} | "
                         f"{v['cpu_s']} | "
                         f"{v['driver_peak_mb'] or '-'} | {v['jvm_peak_mb']} | {v['pyworker_peak_mb'] or '-'} | "
                         f"{v['firings'] if v['firings'] is not None else '-'} | "
                         f"{v['late_rows'] if v['late_rows'] is not None else '-'} | "
                         f"{', '.join(str(x) for x in v['job_s_all'])} | {', '.join(str(x) for x in v['load1'])} |")
        r = s["ratios"]
        prep = s.get("flink_prepare") or {}
        g = lambda k: r.get(k) if r.get(k) is not None else "-"  # noqa: E731
        ratios.append(f"| {s['rows']:,} | {g('replay/naive')} | {g('flink/replay')} | {g('replay/scan')} | "
                      f"{g('replay/naive cpu')} | {g('flink/replay cpu')} | {g('replay/scan cpu')} | "
                      f"{prep.get('seconds', '-')} |")
    rh = ("| rows | replay / naive (wall) | Flink / replay (wall: replay's speed-up) | replay / scan (wall) | "
          "replay / naive (CPU) | Flink / replay (CPU) | replay / scan (CPU) | Flink input prep s (once) |\n"
          "|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    return head + "\n".join(lines) + "\n\n" + rh + "\n".join(ratios) + "\n"


def orchestrate(args) -> int:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for m in modes:
        if m not in MODES:
            raise SystemExit(f"unknown mode {m!r} (one of {', '.join(MODES)})")
    results = Path(args.results_dir)
    results.mkdir(parents=True, exist_ok=True)
    classpath = flink_classpath() if "flink" in modes else None
    for rows in args.rows:
        log = ensure_log(rows, args)
        cfg_path = job_config(log, Path(args.out_dir) / f"replay-{shape_label(rows, args)}", args)
        if args.profile:
            return profile(rows, log, cfg_path, args)
        flink_dir, prep = ensure_flink_input(log, cfg_path, args) if "flink" in modes else (None, None)
        runs = []
        for rep in range(args.reps):
            for mode in modes:
                print(f"bench: {label(rows)} rep {rep + 1}/{args.reps} {mode} ...", file=sys.stderr, flush=True)
                r = one_run(mode, rows, log, cfg_path, args, flink_dir=flink_dir, classpath=classpath)
                print(f"bench:   job {r['job_s']} s, total {r['total_s']} s, cpu {r['cpu_s']} s, "
                      f"jvm peak {r['jvm_peak_mb']} MB, load {r['load1_start']}", file=sys.stderr, flush=True)
                runs.append(r)
                # Written after every run, so a long size still leaves its finished runs behind.
                s = summarise(rows, runs, prep)
                (results / f"{shape_label(rows, args)}.json").write_text(json.dumps(
                    {"summary": s, "complete": rep + 1 == args.reps and mode == modes[-1], "runs": runs,
                     "args": vars(args)}, indent=1, default=str))
                text = write_table(results)
    print(text)
    return 0


def write_table(results: Path) -> str:
    """The table holds every size measured so far (one JSON per size), so sizes can be run separately."""
    all_s = [json.loads(p.read_text())["summary"] for p in results.glob("*.json")]
    all_s.sort(key=lambda s: s["rows"])
    text = table(all_s)
    (results / "table.md").write_text(text)
    return text


def profile(rows: int, log: Path, cfg_path: Path, args) -> int:
    from profile_eventlog import summarise_eventlog
    ev_dir = Path(args.out_dir) / f"eventlog-{label(rows)}"
    shutil.rmtree(ev_dir, ignore_errors=True)
    r = one_run("replay", rows, log, cfg_path, args, event_log=str(ev_dir))
    files = sorted(ev_dir.iterdir())
    text = summarise_eventlog(files[-1])
    head = (f"# Replay profile, {rows:,} rows\n\nOne replay run with the Spark event log on: job {r['job_s']} s, "
            f"total {r['total_s']} s, CPU {r['cpu_s']} s, JVM peak {r['jvm_peak_mb']} MB, load avg "
            f"{r['load1_start']} -> {r['load1_end']}.\n\n")
    out = Path(args.results_dir) / f"profile-{label(rows)}.md"
    out.write_text(head + text)
    print(head + text)
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["worker"]:
        ap = argparse.ArgumentParser(prog="bench/run.py worker")
        ap.add_argument("--mode", required=True)
        ap.add_argument("--config", required=True)
        ap.add_argument("--master", default="local[2]")
        ap.add_argument("--driver-memory", default="4g")
        ap.add_argument("--out", required=True)
        ap.add_argument("--event-log", default=None)
        ap.add_argument("--jvm", choices=("product", "plain"), default=None,
                        help="the driver JVM's start-up (jvm_conf); default: product for replay, plain otherwise")
        wargs = ap.parse_args(argv[1:])
        wargs.jvm = wargs.jvm or ("product" if wargs.mode == "replay" else "plain")
        return worker(wargs)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, action="append", help="log size (repeatable); default 1000000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shape", choices=("headline", "bursty", "bursty-int"), default="headline",
                    help="the log: generate.py's headline, bursty.py's (pauses, idle splits, stragglers, doubles), "
                         "or the same bursty rows with integer values")
    ap.add_argument("--config", default=None, help="job config (default: bench/configs/<shape>.yaml)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="4g",
                    help="spark.driver.memory (local mode: the only JVM); 'default': what replay run picks")
    ap.add_argument("--flink-heap", default="4g", help="-Xmx of the Flink JVM")
    ap.add_argument("--flink-parallelism", type=int, default=2, help="parallelism of Flink's window operator")
    ap.add_argument("--data-dir", default=str(BENCH / "data"))
    ap.add_argument("--out-dir", default=str(BENCH / "out"))
    ap.add_argument("--results-dir", default=str(BENCH / "results"))
    ap.add_argument("--timeout", type=float, default=4 * 3600, help="per run, seconds")
    ap.add_argument("--profile", action="store_true", help="one replay run with the event log: profile summary")
    ap.add_argument("--table-only", action="store_true", help="re-summarise the JSON results into table.md")
    args = ap.parse_args(argv)
    args.rows = args.rows or [1_000_000]
    args.config = default_config(args)
    if args.table_only:
        results = Path(args.results_dir)
        for p in results.glob("*.json"):
            d = json.loads(p.read_text())
            d["summary"] = summarise(d["summary"]["rows"], d["runs"], d["summary"].get("flink_prepare"))
            p.write_text(json.dumps(d, indent=1, default=str))
        print(write_table(results))
        return 0
    return orchestrate(args)


if __name__ == "__main__":
    sys.exit(main())
