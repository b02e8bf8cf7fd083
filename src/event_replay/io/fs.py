"""The few file-system operations the commit and the lock need, on a local path (os) or any Hadoop FileSystem
(HDFS, S3A, GCS... through the Spark session's JVM). Local paths never need a JVM, so a run can be refused (lock
taken) or an interrupted commit rolled forward before Spark starts."""
from __future__ import annotations

import errno
import os
import shutil
import uuid
from typing import Protocol


class Fs(Protocol):
    def exists(self, path: str) -> bool: ...
    def is_dir(self, path: str) -> bool: ...
    def rename(self, src: str, dst: str) -> bool: ...
    def delete(self, path: str) -> None: ...
    def mkdirs(self, path: str) -> None: ...
    def list_names(self, path: str) -> list[str]: ...
    def list_dirs(self, path: str) -> list[str]: ...
    def read_text(self, path: str) -> str | None: ...
    def write_text(self, path: str, text: str) -> None: ...
    def create_exclusive(self, path: str, text: str) -> bool: ...
    def copy_tree(self, src: str, dst: str) -> None: ...


def _write_synced(f, text: str) -> None:
    """`text` into the open file `f`, on disk before this returns. Not atomic by itself (a crash mid-write can leave
    part of it): callers write into staging or a private draft, and only a rename or link makes it visible."""
    f.write(text)
    f.flush()
    os.fsync(f.fileno())


def is_local(path: str) -> bool:
    return path.startswith("file:") or "://" not in path


def local_path(path: str) -> str:
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return path


class LocalFs:
    def exists(self, path: str) -> bool:
        return os.path.lexists(local_path(path))

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(local_path(path))

    def rename(self, src: str, dst: str) -> bool:
        try:
            os.rename(local_path(src), local_path(dst))  # atomic on one POSIX file system
        except OSError:
            return False
        return True

    def delete(self, path: str) -> None:
        p = local_path(path)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=False)
        elif os.path.lexists(p):
            os.remove(p)

    def mkdirs(self, path: str) -> None:
        os.makedirs(local_path(path), exist_ok=True)

    def list_names(self, path: str) -> list[str]:
        p = local_path(path)
        return sorted(os.listdir(p)) if os.path.isdir(p) else []

    def list_dirs(self, path: str) -> list[str]:
        p = local_path(path)
        if not os.path.isdir(p):
            return []
        with os.scandir(p) as entries:
            return sorted(e.name for e in entries if e.is_dir())

    def copy_tree(self, src: str, dst: str) -> None:
        shutil.copytree(local_path(src), local_path(dst))

    def read_text(self, path: str) -> str | None:
        try:
            with open(local_path(path), encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def write_text(self, path: str, text: str) -> None:
        with open(local_path(path), "w", encoding="utf-8") as f:
            _write_synced(f, text)

    def create_exclusive(self, path: str, text: str) -> bool:
        # Write a private file, then link it to the name: link() is the atomic test-and-create, and the name
        # never exists without its content (an O_EXCL create would let a reader see an empty file).
        target = local_path(path)
        draft = f"{target}.draft-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            with open(draft, "x", encoding="utf-8") as f:
                _write_synced(f, text)
            os.link(draft, target)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                raise
            return self._create_exclusive_without_links(target, text)  # e.g. a share with no hard links
        finally:
            if os.path.exists(draft):
                os.remove(draft)
        return True

    @staticmethod
    def _create_exclusive_without_links(target: str, text: str) -> bool:
        try:
            fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                _write_synced(f, text)
        except BaseException:
            os.remove(target)  # e.g. a full disk: an empty lock file would refuse every later run
            raise
        return True


def hadoop_fs(spark, path: str):
    """(the Hadoop FileSystem serving `path`, its Path): the one lookup through the JVM, for the callers that need
    Hadoop's own API (globs, listings with status, renames of folders)."""
    p = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), p


class HadoopFs:
    def __init__(self, spark, path: str):
        self._jvm = spark.sparkContext._jvm
        self._fs = hadoop_fs(spark, path)[0]

    def _p(self, path: str):
        return self._jvm.org.apache.hadoop.fs.Path(path)

    def exists(self, path: str) -> bool:
        return bool(self._fs.exists(self._p(path)))

    def is_dir(self, path: str) -> bool:
        p = self._p(path)
        return bool(self._fs.exists(p) and self._fs.getFileStatus(p).isDirectory())

    def rename(self, src: str, dst: str) -> bool:
        # HDFS and S3A say False for a missing source, Hadoop's local file system raises: False for all (the
        # lock's stale-holder race counts on it: the run whose rename lost competes again instead of failing).
        try:
            return bool(self._fs.rename(self._p(src), self._p(dst)))
        except Exception as exc:  # noqa: BLE001 - py4j wraps FileNotFoundException
            if "java.io.FileNotFoundException" in str(exc):
                return False
            raise

    def delete(self, path: str) -> None:
        self._fs.delete(self._p(path), True)

    def mkdirs(self, path: str) -> None:
        self._fs.mkdirs(self._p(path))

    def list_names(self, path: str) -> list[str]:
        p = self._p(path)
        if not self._fs.exists(p):
            return []
        return sorted(st.getPath().getName() for st in self._fs.listStatus(p))

    def list_dirs(self, path: str) -> list[str]:
        """The sub-folders' names, from one listing (no call per child: object stores charge per call)."""
        p = self._p(path)
        if not self._fs.exists(p):
            return []
        return sorted(st.getPath().getName() for st in self._fs.listStatus(p) if st.isDirectory())

    def copy_tree(self, src: str, dst: str) -> None:
        conf = self._fs.getConf()
        copy = self._jvm.org.apache.hadoop.fs.FileUtil.copy
        if not copy(self._fs, self._p(src), self._fs, self._p(dst), False, conf):
            raise OSError(f"cannot copy {src} to {dst}")

    def read_text(self, path: str) -> str | None:
        p = self._p(path)
        if not self._fs.exists(p):
            return None
        stream = self._fs.open(p)
        try:
            return self._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()

    def write_text(self, path: str, text: str) -> None:
        out = self._fs.create(self._p(path), True)
        try:
            out.write(bytearray(text.encode("utf-8")))
            out.hsync()
        finally:
            out.close()

    def create_exclusive(self, path: str, text: str) -> bool:
        # create(overwrite=false) is an atomic test-and-create on HDFS; object stores only approximate it
        # (S3A checks then writes), which is why the lock also records its holder for a human to judge.
        try:
            out = self._fs.create(self._p(path), False)
        except Exception as exc:  # noqa: BLE001 - py4j wraps FileAlreadyExistsException
            if "FileAlreadyExists" in str(exc) or "already exists" in str(exc):
                return False
            raise
        try:
            try:
                out.write(bytearray(text.encode("utf-8")))
                out.hsync()
            finally:
                out.close()
        except BaseException:
            self.delete(path)  # e.g. a full quota: an empty lock file would refuse every later run
            raise
        return True


def fs_for(path: str, spark=None) -> Fs:
    """LocalFs for a local path (no scheme or file:), else the Hadoop FileSystem of the path (needs spark)."""
    if is_local(path):
        return LocalFs()
    if spark is None:
        raise ValueError(f"{path}: a non-local path needs a Spark session for its Hadoop FileSystem")
    return HadoopFs(spark, path)
