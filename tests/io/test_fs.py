"""io/fs.py: the file-system operations of the commit and the lock, one contract for a local path (LocalFs) and a
Hadoop FileSystem (HadoopFs, here Hadoop's own file:// file system through the test session's JVM)."""
from __future__ import annotations

import errno
import os

import pytest

from event_replay.io import fs as fs_module
from event_replay.io.fs import HadoopFs, LocalFs, fs_for, is_local, local_path


@pytest.fixture(params=["local", pytest.param("hadoop", marks=pytest.mark.spark)])
def fs_and_root(request, tmp_path):
    """(a file system, a folder URI on it): every contract test runs on both implementations."""
    if request.param == "local":
        return LocalFs(), str(tmp_path)
    root = f"file://{tmp_path}"
    return HadoopFs(request.getfixturevalue("spark"), root), root


def _files(tmp_path) -> list[str]:
    """Every entry under tmp_path, relative, except Hadoop's checksum files (its file:// writes leave them)."""
    out = []
    for folder, dirs, files in os.walk(tmp_path):
        out += [os.path.relpath(os.path.join(folder, n), tmp_path) for n in dirs + files if not n.endswith(".crc")]
    return sorted(out)


# --- one contract, both file systems -----------------------------------------------------------------------------

def test_exists_and_is_dir(fs_and_root):
    fs, root = fs_and_root
    fs.mkdirs(f"{root}/d")
    fs.write_text(f"{root}/f", "x")
    assert fs.exists(f"{root}/d") and fs.exists(f"{root}/f")
    assert not fs.exists(f"{root}/missing")
    assert fs.is_dir(f"{root}/d")
    assert not fs.is_dir(f"{root}/f")
    assert not fs.is_dir(f"{root}/missing")


def test_mkdirs_makes_the_parents_and_may_be_repeated(fs_and_root, tmp_path):
    fs, root = fs_and_root
    fs.mkdirs(f"{root}/a/b/c")
    fs.mkdirs(f"{root}/a/b/c")
    assert (tmp_path / "a" / "b" / "c").is_dir()


def test_text_is_written_whole_in_utf8_and_read_back(fs_and_root, tmp_path):
    fs, root = fs_and_root
    path = f"{root}/manifest.json"
    assert fs.read_text(path) is None  # missing: None, not an error
    fs.write_text(path, "a longer first text: déjà vu ✓\n")
    assert (tmp_path / "manifest.json").read_bytes().decode("utf-8") == "a longer first text: déjà vu ✓\n"
    fs.write_text(path, "short")  # replaced, not appended to nor left with the old text's tail
    assert fs.read_text(path) == "short"
    fs.write_text(path, "")
    assert fs.read_text(path) == ""


def test_rename_moves_files_and_folders_and_says_false_when_it_cannot(fs_and_root, tmp_path):
    fs, root = fs_and_root
    fs.write_text(f"{root}/a", "A")
    assert fs.rename(f"{root}/a", f"{root}/b") is True
    assert fs.read_text(f"{root}/b") == "A" and not fs.exists(f"{root}/a")
    fs.mkdirs(f"{root}/staging/part")
    fs.write_text(f"{root}/staging/part/x", "X")
    assert fs.rename(f"{root}/staging", f"{root}/final") is True
    assert fs.read_text(f"{root}/final/part/x") == "X" and not fs.exists(f"{root}/staging")
    assert fs.rename(f"{root}/missing", f"{root}/c") is False
    assert not fs.exists(f"{root}/c")


def test_delete_removes_a_file_or_a_whole_tree_and_ignores_a_missing_path(fs_and_root, tmp_path):
    fs, root = fs_and_root
    fs.mkdirs(f"{root}/t/u")
    fs.write_text(f"{root}/t/u/x", "X")
    fs.write_text(f"{root}/t/y", "Y")
    fs.write_text(f"{root}/keep", "K")
    fs.delete(f"{root}/t/y")
    assert _files(tmp_path) == ["keep", "t", "t/u", "t/u/x"]
    fs.delete(f"{root}/t")
    assert _files(tmp_path) == ["keep"]
    fs.delete(f"{root}/t")  # already gone: no error
    assert _files(tmp_path) == ["keep"]


def test_listings_are_sorted_names_and_empty_for_a_missing_folder(fs_and_root):
    fs, root = fs_and_root
    for name in ("dt=2024-01-02", "dt=2024-01-01", "dt=2024-01-10"):
        fs.mkdirs(f"{root}/{name}")
    fs.write_text(f"{root}/_SUCCESS", "")
    fs.write_text(f"{root}/b.json", "{}")
    assert fs.list_names(root) == ["_SUCCESS", "b.json", "dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-10"]
    assert fs.list_dirs(root) == ["dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-10"]  # folders only
    assert fs.list_names(f"{root}/missing") == [] and fs.list_dirs(f"{root}/missing") == []
    assert fs.list_dirs(f"{root}/dt=2024-01-01") == [] and fs.list_names(f"{root}/dt=2024-01-01") == []


def test_copy_tree_copies_every_file_and_leaves_the_source(fs_and_root, tmp_path):
    fs, root = fs_and_root
    fs.mkdirs(f"{root}/src/a/b")
    fs.write_text(f"{root}/src/a/b/x", "X")
    fs.write_text(f"{root}/src/y", "Y")
    fs.copy_tree(f"{root}/src", f"{root}/dst")
    assert fs.read_text(f"{root}/dst/a/b/x") == "X" and fs.read_text(f"{root}/dst/y") == "Y"
    assert fs.read_text(f"{root}/src/a/b/x") == "X" and fs.read_text(f"{root}/src/y") == "Y"
    assert _files(tmp_path / "dst") == ["a", "a/b", "a/b/x", "y"]


def test_create_exclusive_creates_once_with_its_text_and_leaves_nothing_else(fs_and_root, tmp_path):
    fs, root = fs_and_root
    lock = f"{root}/_lock"
    assert fs.create_exclusive(lock, '{"pid": 1}') is True
    assert fs.create_exclusive(lock, '{"pid": 2}') is False  # taken: the holder's text stays
    assert fs.read_text(lock) == '{"pid": 1}'
    assert _files(tmp_path) == ["_lock"]  # no draft left behind, by the winner nor the loser
    fs.delete(lock)
    assert fs.create_exclusive(lock, '{"pid": 3}') is True  # released: free again
    assert fs.read_text(lock) == '{"pid": 3}'


# --- LocalFs: paths, links, the lock's two ways to create ---------------------------------------------------------

def test_local_paths_are_the_ones_without_a_scheme_or_with_file():
    assert is_local("/data/out") and is_local("out/relative") and is_local("file:///data/out")
    assert is_local("file:/data/out")
    assert not is_local("hdfs://nn:8020/out") and not is_local("s3a://bucket/out")
    assert local_path("file:///data/out") == "/data/out"
    assert local_path("file:/data/out") == "/data/out"
    assert local_path("/data/out") == "/data/out" and local_path("out") == "out"


def test_local_fs_takes_file_uris(tmp_path):
    fs = LocalFs()
    fs.write_text(f"file://{tmp_path}/a", "A")
    assert (tmp_path / "a").read_text() == "A"
    assert fs.read_text(f"file:{tmp_path}/a") == "A"
    assert fs.list_names(f"file://{tmp_path}") == ["a"]


def test_local_delete_removes_a_link_not_what_it_points_to(tmp_path):
    fs = LocalFs()
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "x").write_text("X")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert fs.exists(str(tmp_path / "dangling"))  # a dangling link is still a name in the folder
    fs.delete(str(tmp_path / "link"))
    fs.delete(str(tmp_path / "dangling"))
    assert sorted(os.listdir(tmp_path)) == ["target"] and (tmp_path / "target" / "x").read_text() == "X"


def test_local_listing_of_a_file_is_empty(tmp_path):
    (tmp_path / "f").write_text("x")
    assert LocalFs().list_names(str(tmp_path / "f")) == [] and LocalFs().list_dirs(str(tmp_path / "f")) == []


def test_local_copy_tree_refuses_an_existing_target(tmp_path):
    fs = LocalFs()
    (tmp_path / "src").mkdir()
    (tmp_path / "dst").mkdir()
    with pytest.raises(FileExistsError):
        fs.copy_tree(str(tmp_path / "src"), str(tmp_path / "dst"))


def test_written_text_is_flushed_then_fsynced_before_the_call_returns(tmp_path, monkeypatch):
    """write_text and both ways of create_exclusive go through _write_synced: the bytes reach the OS (flush)
    before fsync asks for them on disk, and fsync is asked for the file that was written."""
    on_disk_at_fsync: list[str] = []

    def fsync(fd):
        on_disk_at_fsync.append(os.readlink(f"/proc/self/fd/{fd}") + "=" + open(f"/proc/self/fd/{fd}").read())

    monkeypatch.setattr(fs_module.os, "fsync", fsync)
    fs = LocalFs()
    fs.write_text(str(tmp_path / "m"), "manifest")
    assert on_disk_at_fsync == [f"{tmp_path}/m=manifest"]
    on_disk_at_fsync.clear()
    assert fs.create_exclusive(str(tmp_path / "_lock"), "holder")
    assert len(on_disk_at_fsync) == 1 and on_disk_at_fsync[0].startswith(f"{tmp_path}/_lock.draft-")
    assert on_disk_at_fsync[0].endswith("=holder")  # the draft, whole, before it is linked to the name
    on_disk_at_fsync.clear()
    assert LocalFs._create_exclusive_without_links(str(tmp_path / "_lock2"), "holder2")
    assert on_disk_at_fsync == [f"{tmp_path}/_lock2=holder2"]


@pytest.mark.parametrize("code", [errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP])
def test_without_hard_links_the_lock_is_created_with_o_excl(tmp_path, monkeypatch, code):
    """A file system without hard links (link() fails with EPERM or ENOTSUP, e.g. some network shares): the
    lock is created by O_EXCL instead, still once, and the draft is removed."""
    def no_links(src, dst):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(fs_module.os, "link", no_links)
    fs = LocalFs()
    lock = str(tmp_path / "_lock")
    assert fs.create_exclusive(lock, "first") is True
    assert fs.create_exclusive(lock, "second") is False
    assert fs.read_text(lock) == "first"
    assert os.listdir(tmp_path) == ["_lock"]


def test_any_other_link_failure_is_raised_and_leaves_no_draft(tmp_path, monkeypatch):
    def link_fails(src, dst):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(fs_module.os, "link", link_fails)
    with pytest.raises(OSError) as err:
        LocalFs().create_exclusive(str(tmp_path / "_lock"), "x")
    assert err.value.errno == errno.EIO
    assert os.listdir(tmp_path) == []


def test_a_failed_write_leaves_no_lock_and_no_draft(tmp_path, monkeypatch):
    """A full disk while the lock's text is written: neither way leaves a file behind (an empty lock would refuse
    every later run), and the error reaches the caller."""
    def disk_full(f, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fs_module, "_write_synced", disk_full)
    lock = str(tmp_path / "_lock")
    with pytest.raises(OSError, match="No space"):
        LocalFs().create_exclusive(lock, "x")
    assert os.listdir(tmp_path) == []
    with pytest.raises(OSError, match="No space"):
        LocalFs._create_exclusive_without_links(lock, "x")
    assert os.listdir(tmp_path) == []


# --- choosing the file system --------------------------------------------------------------------------------------

def test_fs_for_needs_no_spark_for_a_local_path_and_names_a_remote_one_without_it(tmp_path):
    assert isinstance(fs_for(str(tmp_path)), LocalFs)
    assert isinstance(fs_for(f"file://{tmp_path}"), LocalFs)
    with pytest.raises(ValueError, match="s3a://bucket/out: a non-local path needs a Spark session"):
        fs_for("s3a://bucket/out")


@pytest.mark.spark
def test_fs_for_a_scheme_serves_it_by_the_sessions_hadoop_file_system(spark, tmp_path):
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    conf.set("fs.replaytest.impl", "org.apache.hadoop.fs.RawLocalFileSystem")  # any scheme Hadoop can serve
    try:
        fs = fs_for("replaytest:///out", spark)
        assert isinstance(fs, HadoopFs)
        assert fs._fs.getClass().getName() == "org.apache.hadoop.fs.RawLocalFileSystem"
    finally:
        conf.unset("fs.replaytest.impl")


# --- HadoopFs: the lock when the store fails half way ---------------------------------------------------------------

class _FailingWrites:
    """A Hadoop FileSystem (the real one, through py4j) whose created files fail on write, as a full quota does:
    a real quota cannot be reached here."""

    def __init__(self, real):
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)

    def create(self, path, overwrite):
        stream = self.real.create(path, overwrite)

        class Stream:
            def write(self, data):
                raise RuntimeError("DSQuotaExceededException: quota exceeded")

            def hsync(self):
                pass

            def close(self):
                stream.close()

        return Stream()


@pytest.mark.spark
def test_hadoop_lock_that_cannot_be_written_is_removed(spark, tmp_path):
    fs = HadoopFs(spark, f"file://{tmp_path}")
    fs._fs = _FailingWrites(fs._fs)
    with pytest.raises(RuntimeError, match="quota"):
        fs.create_exclusive(f"file://{tmp_path}/_lock", "x")
    assert _files(tmp_path) == []


class _DeniedCreates(_FailingWrites):
    def create(self, path, overwrite):
        raise RuntimeError("org.apache.hadoop.security.AccessControlException: Permission denied: user=replay")


@pytest.mark.spark
def test_hadoop_create_exclusive_raises_what_is_not_an_existing_file(spark, tmp_path):
    """Only "the file exists" means taken: any other failure to create (permissions, a store that is down) is
    raised, not reported as another run's lock."""
    fs = HadoopFs(spark, f"file://{tmp_path}")
    fs._fs = _DeniedCreates(fs._fs)
    with pytest.raises(RuntimeError, match="Permission denied"):
        fs.create_exclusive(f"file://{tmp_path}/_lock", "x")
