"""`replay compare` through the CLI (in this process, on the tests' Spark session): the summary line, compare/
written, exit codes 0 (agrees), 1 (differs), 2 (bad input, named); and the live parity suite and the why-report's
"versus live" section on its result."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from event_replay.semantics.model import LogRow

pytestmark = pytest.mark.spark

T0 = 1_704_067_200_000


def _rows() -> list[LogRow]:
    rows = []
    for i in range(400):  # two splits, 4 keys, one straggler in 25 (late)
        a = T0 + 250 * i
        e = a - (6_000 if i % 25 == 7 else (i * 37) % 400)
        rows.append(LogRow(f"p{i % 2}", i // 2, a, e, f"k{i % 4}", {"value": i % 10}))
    return rows


@pytest.fixture(scope="module")
def replayed(tmp_path_factory, spark):
    from event_replay.job import run_replay
    from event_replay.semantics.config import load_config

    root = tmp_path_factory.mktemp("compare-cli")
    rows = _rows()
    (root / "log").mkdir()
    pq.write_table(pa.table({"split": [r.split for r in rows], "offset": [r.offset for r in rows],
                             "arrival_time": pa.array([r.arrival_time for r in rows], pa.timestamp("ms", "UTC")),
                             "event_time": pa.array([r.event_time for r in rows], pa.timestamp("ms", "UTC")),
                             "key": [r.key for r in rows], "value": [r.payload["value"] for r in rows]}),
                   root / "log" / "part-0.parquet")
    raw = {"source": {"path": str(root / "log")},
           "watermark": {"max_out_of_orderness": "1s", "interval": "200ms", "idle_timeout": "5s"},
           "window": {"type": "tumbling", "size": "10s"},
           "aggregations": {"cnt": "count(*)", "total": "sum(value)", "avg_v": "avg(value)"},
           "output": {"path": str(root / "out")}}
    (root / "job.yaml").write_text(yaml.safe_dump(raw))
    run_replay(spark, load_config(root / "job.yaml"))
    windows = pq.read_table(root / "out" / "windows").to_pylist()
    late = pq.read_table(root / "out" / "late_events").to_pylist()
    return root, windows, late


def _write_live(root: Path, name: str, windows: list[dict], fmt: str = "csv") -> str:
    folder = root / name
    folder.mkdir()
    lines = ["user,start,end,n,amount,avg_v"]
    for w in windows:
        lines.append(f"{w['key']},{w['window_start'].isoformat()},{w['window_end'].isoformat()},{w['cnt']},"
                     f"{w['total']},{w['avg_v'] + 1e-13 if w['avg_v'] is not None else ''}")
    (folder / "part-0.csv").write_text("\n".join(lines) + "\n")
    return str(folder)


COLUMNS = "key=user,window_start=start,window_end=end,cnt=n,total=amount"


def _compare(root: Path, live: str, *extra: str) -> int:
    from event_replay.cli import main

    return main(["compare", "--config", str(root / "job.yaml"), "--live", live, "--live-format", "csv",
                 "--live-columns", COLUMNS, "--live-columns", "avg_v=avg_v", *extra])


def test_agreement_exits_0_and_writes_compare(replayed, capsys):
    root, windows, _ = replayed
    live = _write_live(root, "live-same", windows)
    assert _compare(root, live) == 0
    line = capsys.readouterr().out.splitlines()[0]
    n = len({(w["key"], w["window_start"]) for w in windows})
    assert line.startswith(f"compare: windows compared {n}, equal {n}, differing 0") and "agreement 100% " in line
    out = root / "out" / "compare"
    s = json.loads((out / "summary.json").read_text())
    # avg_v is a floating average: compared within the tolerance (the live one is 1e-13 off)
    assert {r["aggregate"]: r["exact"] for r in s["rules"]} == {"cnt": True, "total": True, "avg_v": False}
    assert (out / "index.html").is_file() and (out / "differences.csv").is_file()
    assert "Does the replay match production?" in (out / "index.html").read_text()
    # --summation-order known: the average must be bit-equal, and is not
    assert _compare(root, live, "--summation-order", "known", "--out", str(root / "cmp-known")) == 1


def test_differences_exit_1_and_are_explained(replayed, capsys):
    root, windows, _ = replayed
    changed = [dict(w, cnt=w["cnt"] + 1) if i == 3 else w for i, w in enumerate(windows)][1:]  # one changed, one gone
    live = _write_live(root, "live-diff", changed)
    assert _compare(root, live, "--out", str(root / "cmp-diff")) == 1
    line = capsys.readouterr().out.splitlines()[0]
    assert "differing 2 (value 1, replay only 1, live only 0)" in line
    s = json.loads((root / "cmp-diff" / "summary.json").read_text())
    assert s["totals"]["differing"] == 2 and all(d["explanation"] for d in s["differences_sample"])
    assert _compare(root, live, "--out", str(root / "cmp-report"), "--report-only") == 0


def test_bad_input_exits_2_naming_it(replayed, capsys):
    root, windows, _ = replayed
    live = _write_live(root, "live-bad", windows)
    text = Path(live, "part-0.csv").read_text().replace("user,start,end,n,", "user,start,end,count,")
    Path(live, "part-0.csv").write_text(text)
    assert _compare(root, live, "--out", str(root / "cmp-bad")) == 2
    err = capsys.readouterr().err
    assert "bad input: live column 'n'" in err and "missing: role cnt" in err
    text = Path(live, "part-0.csv").read_text().replace("user,start,end,count,", "user,start,end,n,")
    Path(live, "part-0.csv").write_text(text.replace(f",{windows[0]['cnt']},", ",many,", 1))
    assert _compare(root, live, "--out", str(root / "cmp-bad")) == 2
    assert "live column 'n': 1 value(s) of type string are not a valid value of aggregate cnt, e.g. 'many'" in \
        capsys.readouterr().err
    # refused before Spark: an unknown role, a missing path, a bad partition
    from event_replay.cli import main

    base = ["compare", "--config", str(root / "job.yaml"), "--live", live]
    assert main([*base, "--live-columns", "kee=user"]) == 2 and "unknown role 'kee'" in capsys.readouterr().err
    assert main(["compare", "--config", str(root / "job.yaml"), "--live", str(root / "nope")]) == 2
    assert "--live: no such file or folder" in capsys.readouterr().err
    assert main([*base, "--partition", "2024-13-01"]) == 2 and "--partition" in capsys.readouterr().err


def test_live_parity_suite_and_why_report_versus_live(replayed, spark, capsys):
    """The comparison next to the outputs (compare/): the GX live parity suite runs on it, the why-report shows it."""
    from event_replay.quality.validation import validate
    from event_replay.why.report import why_report
    from event_replay.semantics.config import load_config

    root, windows, _ = replayed
    cfg = load_config(root / "job.yaml")
    live = _write_live(root, "live-parity", [dict(w, cnt=w["cnt"] + 1) if i == 0 else w
                                             for i, w in enumerate(windows)])
    assert _compare(root, live, "--min-agreement", "90") == 1  # default out: <output>/compare, next to the reports
    report = validate(cfg.output.path, cfg, spark=spark, suites=["live_parity"], build_docs=False)
    assert report.success and {r.suite for r in report.results} == {"live_parity"}
    assert _compare(root, live, "--min-agreement", "100") == 1
    report = validate(cfg.output.path, cfg, spark=spark, suites=["live_parity"], build_docs=False)
    failed = report.failed
    assert [f.name for f in failed] == ["expect_live_agreement_per_partition"]
    index = why_report(cfg.output.path, cfg, spark=spark)
    html = Path(index).read_text()
    assert "id='versus-live'" in html and "compare page" in html and "../compare/index.html" in html
    summary = json.loads(Path(index).with_name("summary.json").read_text())
    assert summary["versus_live"]["totals"]["value_differs"] == 1


def _files(folder: Path) -> dict[str, int]:
    return {str(f.relative_to(folder)): f.stat().st_mtime_ns for f in sorted(folder.rglob("*")) if f.is_file()}


def test_calibration_is_replay_tune_against_live_from_the_run_folder_and_compare_reads_it(replayed, spark, capsys):
    """Calibration is its own command (`replay tune --against-live`, the DAG's calibrate task): from a run folder's
    effective config it ranks the grid against the live output over the run's range, reading the source and never
    the replay's outputs, which stay as they were; `replay compare --calibration` then hands its ranking to the
    settings search (against the same live output only). The live output here is the replay's own, so the
    config's settings (1s, 5s) rank first at full agreement, and the why-report shows the ranking."""
    import shutil

    from event_replay.cli import main

    root, windows, _ = replayed
    live = _write_live(root, "live-calibration", windows)
    run = root / "out" / "_airflow" / "manual__calibration"
    run.mkdir(parents=True)
    shutil.copy(root / "job.yaml", run / "job.yaml")  # the effective config a DAG run keeps
    outputs = {ds: _files(root / "out" / ds) for ds in ("windows", "late_events", "watermarks", "counts")}
    assert main(["tune", "--config", str(run / "job.yaml"), "--partitions", "2024-01-01..2024-01-01",
                 "--max-out-of-orderness", "1s,20s", "--idle-timeout", "5s", "--against-live", live,
                 "--live-format", "csv", "--live-columns", COLUMNS, "--live-columns", "avg_v=avg_v"]) == 0
    out = capsys.readouterr().out
    assert "tune: 1/2 delay 1s, idle 5s" in out and "tune: 2/2 delay 20s, idle 5s" in out
    assert "calibration: the live output agrees best with delay 1s, idle 5s" in out
    assert {ds: _files(root / "out" / ds) for ds in outputs} == outputs  # the run's outputs untouched
    folder = next((root / "out" / "_tuning").glob("delay_1s-20s*"))
    cal = json.loads((folder / "calibration.json").read_text())
    best, other = cal["ranking"]
    assert (best["variant"], best["live_rank"], best["live_score"]) == ("delay 1s, idle 5s, lateness 0ms", 1, 1.0)
    assert other["live_rank"] == 2 and other["live_score"] < 1.0
    assert json.loads((folder / "spark_jobs.json").read_text())["calibration"] > 0  # the run report prints it

    assert _compare(root, live, "--out", str(run / "compare"), "--search-settings", "--calibration",
                    str(folder)) == 0
    assert "tune:" not in capsys.readouterr().out  # the comparison replays nothing of the grid
    assert json.loads((run / "compare" / "spark_jobs.json").read_text()).keys() == {"compare"}
    other_live = _write_live(root, "live-other", windows)
    assert _compare(root, other_live, "--search-settings", "--calibration", str(folder)) == 2
    err = capsys.readouterr().err
    assert "--calibration" in err and "live-calibration" in err and "Traceback" not in err, err
    from event_replay.semantics.config import load_config
    from event_replay.why.report import why_report

    index = why_report(str(root / "out"), load_config(root / "job.yaml"), spark=spark, report_dir=run / "why_report")
    why = json.loads(Path(index).with_name("summary.json").read_text())
    assert [c["verdict"] for c in why["versus_live"]["calibrations"]] == [cal["verdict"]]
