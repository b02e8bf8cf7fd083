"""Faults for the soak (scripts/soak.py) and the reliability tests beyond killing a process of the run: the metadata
database killed and started again, a Spark worker's process group killed, a file system filled up.

Each is what happens to a real deployment, not a simulation: PostgreSQL's postmaster and every backend it forked
get SIGKILL at once (a database host or container that dies; the next start runs crash recovery), a worker's whole
process group (the Worker JVM and the executors it launched, as a lost host), a tmpfs (a disk of its own, mounted
here; root only) filled with one file until nothing is left. Each fault is undone by the caller (`restart_postgres`,
starting the worker again, `free`)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILLER = "_chaos_filler"  # starts with `_`: Spark's readers skip it, were it ever inside an output


def _children(pid: int) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:  # the field after the state: the parent's pid
            found.append(int(d.name))
    return found


def kill_postgres(cluster: Path, timeout: float = 60) -> int:
    """SIGKILL to the postmaster of `scripts/postgres.sh start`'s cluster and to every backend it forked, at once
    (a backend left alive would keep the shared memory and refuse the next start); returns the postmaster's pid once
    every one of them is gone (reaped: the next start takes a dead postmaster's pid for a live one until then)."""
    pid = int((Path(cluster) / "data" / "postmaster.pid").read_text().split()[0])
    killed = [pid, *_children(pid)]
    for p in killed:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while any(Path(f"/proc/{p}").exists() for p in killed):
        if time.monotonic() > deadline:
            raise RuntimeError(f"PostgreSQL's processes {killed} are still there {timeout:.0f} s after SIGKILL")
        time.sleep(0.1)
    return pid


def restart_postgres(cluster: Path, timeout: float = 300) -> None:
    """Start the killed cluster again on its port (crash recovery first); raises if it does not come up."""
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "restart", str(cluster)],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"postgres did not start again: {proc.stderr[-2000:]}")


def kill_group(pid: int) -> None:
    """SIGKILL to the process group `pid` leads (a Spark worker started in its own session, its executors with it)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def mount_tmpfs(size: str, where: Path | None = None) -> Path | None:
    """A new tmpfs of `size` (e.g. 64m) on `where` (made; default: a fresh temporary folder); None where it cannot be
    mounted (not root, no mount, a kernel that refuses)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        return None
    if where is None:
        where = Path(tempfile.mkdtemp(prefix="replay-tmpfs-"))
    else:
        Path(where).mkdir(parents=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        Path(where).rmdir()
        return None
    return Path(where)


def unmount(where: Path, keep: bool = False) -> None:
    """Unmount the tmpfs at `where`; `keep`: what it holds stays at the same path (on the disk below)."""
    kept = None
    if keep:
        kept = Path(tempfile.mkdtemp(prefix="replay-tmpfs-kept-")) / "content"
        shutil.copytree(where, kept, symlinks=True)
    subprocess.run(["umount", "-l", str(where)], capture_output=True)
    shutil.rmtree(where, ignore_errors=True)
    if kept is not None:
        shutil.move(str(kept), str(where))
        kept.parent.rmdir()


def fill(where: Path, leave: int = 0) -> Path:
    """A file that takes all of the file system's free space but `leave` bytes."""
    st = os.statvfs(where)
    filler = Path(where) / FILLER
    room = max(0, st.f_bavail * st.f_frsize - leave)
    with open(filler, "wb", buffering=0) as f:  # unbuffered: a write that finds the disk full fails here
        try:
            while room > 0:  # in pieces: a large disk is not one buffer in memory
                written = f.write(b"\0" * min(room, 8 << 20))
                if not written:
                    break
                room -= written
        except OSError:  # full a little sooner than statvfs said (metadata): full is what is wanted
            pass
    return filler


def free(where: Path) -> None:
    (Path(where) / FILLER).unlink(missing_ok=True)
