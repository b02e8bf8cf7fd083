"""A damaged source file in the middle of a range (issue 32, item 2): a truncated Parquet file, a file that is not
Parquet, a file the replay may not read (permissions). `make test` runs the truncated file and the footer checks;
`-m slow` the other two kinds end to end.

The decision (docs/semantics.md, "Damaged input files"): the range stops before the damaged file's partition. The
partitions before it are committed (as they would be inside the range: held), the run fails with one line naming
the file, its partition and the cause (exit 2, key source.path: the input needs fixing, a retry alone cannot help),
and nothing of that partition or after it is written. Once the file is fixed, the same command continues after the
last partition committed, and the outputs equal a run that never met the damage (decoded content of every
partition, and the carried state). Damaged files are not quarantined: a file's rows are not known, so the windows
of its partition and, through the carried state, of every later one would be wrong without saying so.

Permissions: as root (CI and these machines), chmod 000 does not stop a read: root reads through the capabilities
CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH. The unreadable case then runs its replay without them (`setpriv
--bounding-set -dac_override,-dac_read_search`: still root, but file modes apply), so the file really is unreadable
to it; without setpriv it is skipped, saying why. The footer check (`io.files.damage`) is tested the same way
without Spark.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from decoded import digests, partition_digests
from event_replay.io.files import DamagedFileError, damage
from event_replay.io.lock import LOCK
from event_replay.layout import RANGE_PROGRESS_FILE
from event_replay.pipeline import PartitionSpan
from event_replay.range_replay import run_range
from event_replay.semantics.config import parse_config
from event_replay.orchestration.failures import is_progress

DAYS = ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]
BAD = DAYS[2]
DATASETS = ("windows", "late_events", "watermarks", "quarantine", "counts")
REPLAY = str(Path(sys.executable).parent / "replay")
IS_ROOT = os.geteuid() == 0


# As root: run without the capabilities that let root read any file (file modes then apply to it too).
NO_DAC = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def _without_dac() -> list[str] | None:
    """The command prefix that makes a chmod 000 file unreadable to what it runs ([] when not root), or None."""
    if not IS_ROOT:
        return []
    return NO_DAC if shutil.which("setpriv") else None


def _cfg_dict(source: Path, out: Path) -> dict:
    return {"source": {"path": str(source), "splits": ["p0", "p1", "p2"]},
            "watermark": {"emit": "periodic", "interval": "200ms", "idle_timeout": "5s",
                          "max_out_of_orderness": "500ms"},
            "window": {"type": "tumbling", "size": "10s", "allowed_lateness": "2s"},
            "aggregations": {"cnt": "count(*)", "total": "sum(value)"},
            "replay": {"end_of_input": "flush"}, "output": {"path": str(out)}}


def _request() -> PartitionSpan:
    return PartitionSpan.between(first_id=DAYS[0], last_id=DAYS[-1], first=True, previous=None, end_of_input="flush",
                        allow_missing=False)


def _damage(f: Path, kind: str) -> bytes:
    """Damage `f` as `kind`; returns its bytes, to repair it."""
    good = f.read_bytes()
    if kind == "truncated":
        f.write_bytes(good[: len(good) // 2])  # an export cut short: no footer
    elif kind == "not_parquet":
        f.write_bytes(b"split,offset,arrival_time\np0,1,2024-01-03T00:00:00Z\n")  # a CSV under a .parquet name
    elif kind == "unreadable":
        f.chmod(0o000)
    return good


def _repair(f: Path, good: bytes) -> None:
    f.chmod(0o644)
    f.write_bytes(good)


@pytest.fixture(scope="module")
def world():
    """A 4-day source and the reference outputs (a range run never damaged)."""
    from event_replay.samples.days import generate_days, write_days

    base = Path(tempfile.mkdtemp(prefix="replay-damaged-"))
    base.chmod(0o755)
    source = base / "source"
    write_days(source, generate_days(DAYS[0], days=len(DAYS), rows_per_day=200, splits=3, seed=3, rate=20.0))
    assert sorted(p.name for p in source.iterdir()) == [f"dt={d}" for d in DAYS]
    yield {"base": base, "source": source}
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def reference(spark, world):
    """The decoded outputs of the range never damaged: strict, and without the schema's nullability (the
    partitions a stopped range commits are replayed as held; the engine marks `fire_reason` not null only in a
    span that ends with a flush, which changes no value)."""
    out = world["base"] / "reference"
    run_range(spark, parse_config(_cfg_dict(world["source"], out)), _request(), progress=lambda line: None)
    return {"strict": digests(out), "loose": digests(out, strict=False)}


def _fresh(world, kind: str) -> tuple[Path, Path, Path]:
    """A copy of the source for this case (the others' stay intact), its output folder, the file to damage."""
    source = world["base"] / f"source-{kind}"
    if source.exists():
        shutil.rmtree(source)
    shutil.copytree(world["source"], source)
    for p in [source, *source.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    out = world["base"] / f"out-{kind}"
    if out.exists():
        shutil.rmtree(out)
    victim = next((source / f"dt={BAD}").glob("*.parquet"))
    return source, out, victim


def _check_stopped(out: Path, reference: dict, message: str, victim: Path, cause: str) -> None:
    # One line naming the file, its partition, the cause, and what is committed.
    assert "\n" not in message.strip(), message
    assert str(victim) in message and f"(partition dt={BAD})" in message and cause in message, message
    assert f"partitions {DAYS[0]}..{DAYS[1]} are committed, {DAYS[2]}..{DAYS[3]} are not" in message, message
    # The partitions before it are committed, equal to the undamaged run's; nothing of it or after it.
    for day in DAYS[:2]:
        assert all((out / ds / f"dt={day}").is_dir() for ds in DATASETS), day
        got = {k: v for k, v in partition_digests(out, day, strict=False).items() if not k.startswith("_state")}
        want = {k: v for k, v in reference["loose"].items() if f"dt={day}" in k.split("/")}
        assert got == want, day
    for day in DAYS[2:]:
        assert not any((out / ds / f"dt={day}").exists() for ds in DATASETS), day
    # No staging, no lock; the range journal says where a rerun continues.
    assert not [p.name for p in out.iterdir() if p.name.startswith(("_staging-", "_commit"))]
    assert not (out / LOCK).exists()
    assert json.loads((out / RANGE_PROGRESS_FILE).read_text())["committed"] == DAYS[1]


def _check_resumed(out: Path, reference: dict) -> None:
    # Every partition and the carried state as if nothing had happened: the values everywhere, the exact files
    # from the damaged partition on (and the state).
    assert digests(out, strict=False) == reference["loose"]
    strict = digests(out)
    assert {k: v for k, v in strict.items() if not any(f"dt={d}" in k.split("/") for d in DAYS[:2])} == \
        {k: v for k, v in reference["strict"].items() if not any(f"dt={d}" in k.split("/") for d in DAYS[:2])}
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("_")) == ["_state"]


@pytest.mark.spark
@pytest.mark.parametrize("kind,cause", [("truncated", "truncated Parquet file"),
                                        pytest.param("not_parquet", "not a Parquet file", marks=pytest.mark.slow)])
def test_a_damaged_file_stops_the_range_before_its_partition(spark, world, reference, kind, cause):
    source, out, victim = _fresh(world, kind)
    cfg = parse_config(_cfg_dict(source, out))
    good = _damage(victim, kind)
    with pytest.raises(DamagedFileError) as exc:
        run_range(spark, cfg, _request(), progress=lambda line: None)
    assert exc.value.key == "source.path"
    _check_stopped(out, reference, exc.value.why, victim, cause)

    _repair(victim, good)
    lines: list[str] = []
    summary = run_range(spark, cfg, _request(), progress=lines.append)
    assert summary.resumed_after == DAYS[1] and summary.replayed == DAYS[2:], (summary, lines)
    _check_resumed(out, reference)


def _run(prefix: list[str], args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([*prefix, REPLAY, *args], env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
@pytest.mark.spark
def test_an_unreadable_file_stops_the_range_before_its_partition(world, reference):
    """End to end through `replay run` (exit 2, one line). As root, the replay runs without CAP_DAC_OVERRIDE."""
    prefix = _without_dac()
    if prefix is None:
        pytest.skip("running as root, where chmod 000 does not stop a read, and no setpriv to drop the "
                    "capabilities that let root read any file")
    source, out, victim = _fresh(world, "unreadable")
    cfg = world["base"] / "unreadable.yaml"
    import yaml

    cfg.write_text(yaml.safe_dump(_cfg_dict(source, out)))
    cfg.chmod(0o644)
    args = ["run", "--config", str(cfg), "--master", "local[1]", "--partitions", f"{DAYS[0]}..{DAYS[-1]}", "--first",
            "--end-of-input", "flush",
            "--conf", "spark.ui.enabled=false"]
    good = _damage(victim, "unreadable")
    proc = _run(prefix, args)
    assert proc.returncode == 2, proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    ours = [line for line in proc.stderr.splitlines() if line.startswith("replay:") and not is_progress(line)]
    assert len(ours) == 1, proc.stderr[-4000:]
    assert ours[0].startswith("replay: config error: key 'source.path': damaged input file"), ours
    _check_stopped(out, reference, ours[0], victim, "unreadable: permission denied")

    _repair(victim, good)
    proc = _run(prefix, args)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert f"resuming {DAYS[0]}..{DAYS[-1]} after {DAYS[1]}" in proc.stdout + proc.stderr
    _check_resumed(out, reference)


def test_the_footer_check_names_each_kind_of_damage(tmp_path):
    """io.files.damage, without Spark: what each kind of damage is called; a good file and a CSV are readable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"a": list(range(100))}), good)
    assert damage(None, str(good), "parquet") is None
    cases = {"truncated.parquet": (good.read_bytes()[:-30], "truncated Parquet file"),
             "text.parquet": (b"not parquet at all", "not a Parquet file"),
             "empty.parquet": (b"", "empty file (0 bytes)"),
             "tiny.parquet": (b"PAR1", "truncated Parquet file"),
             "badfooter.parquet": (b"PAR1" + b"\x00" * 40 + b"\xff\xff\x00\x00PAR1", "damaged Parquet footer")}
    for name, (data, cause) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert cause in (damage(None, str(tmp_path / name), "parquet") or ""), name
    (tmp_path / "rows.csv").write_text("a\n1\n")
    assert damage(None, str(tmp_path / "rows.csv"), "csv") is None
    assert damage(None, str(tmp_path / "gone.parquet"), "parquet").startswith("unreadable: ")
    err = DamagedFileError(str(tmp_path / "dt=2024-01-03" / "part-0.parquet"), "truncated Parquet file (9 bytes)")
    assert err.key == "source.path" and "(partition dt=2024-01-03)" in err.why and "nothing was replayed" in err.why


def test_the_footer_check_sees_a_file_without_read_permission(tmp_path):
    """Run where the file's mode applies (as root: without CAP_DAC_OVERRIDE, since chmod 000 does not stop root)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = Path(tempfile.mkdtemp(prefix="replay-perm-"))
    try:
        base.chmod(0o755)
        f = base / "part-0.parquet"
        pq.write_table(pa.table({"a": [1]}), f)
        f.chmod(0o000)
        code = ("import sys; from event_replay.io.files import damage; "
                f"print(damage(None, {str(f)!r}, 'parquet'))")
        prefix = _without_dac()
        if prefix is None:
            pytest.skip("running as root (chmod 000 does not stop root) and no setpriv to drop CAP_DAC_OVERRIDE")
        cmd = [*prefix, sys.executable, "-c", code]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=str(base))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "unreadable: permission denied"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_single_partition_run_names_the_damaged_file(spark, world):
    """`--partition` (and a whole-source run) read through the same check: nothing replayed, file named."""
    from partition_cases import run_partition

    source, out, victim = _fresh(world, "single")
    cfg = parse_config(_cfg_dict(source, out))
    _damage(victim, "truncated")
    with pytest.raises(DamagedFileError) as exc:
        run_partition(spark, cfg, BAD, first=True)
    assert str(victim) in exc.value.why and f"dt={BAD}" in exc.value.why and "nothing was replayed" in exc.value.why
    assert not out.exists() or not [p for p in out.iterdir() if p.name != "_state"]
    single = dataclasses.replace(cfg.source, path=str(source / f"dt={BAD}"))
    with pytest.raises(DamagedFileError):
        from event_replay.job import run_replay

        run_replay(spark, dataclasses.replace(cfg, source=single))
