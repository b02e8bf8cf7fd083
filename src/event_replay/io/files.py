"""The source's files: which data files a path holds (through Spark, or a local folder without it), the partition
folders around one (`dt=`, `hour=`), and schema drift between a partition's files and its predecessor's. Reads only
file listings and Parquet footers."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from ..semantics.config import JobConfig
from ..semantics.config_keys import ConfigError
from .fs import fs_for, hadoop_fs, is_local, local_path
from .partition_folders import folder_of, partitions_present


class SchemaDriftError(ConfigError):
    """A source file whose column types differ from the others: refused before the replay, naming the file."""

    def __init__(self, why: str):
        super().__init__("source.path", why)


class DamagedFileError(ConfigError):
    """A source file that cannot be read (truncated, not Parquet, no permission): refused before its partition is
    replayed, naming the file, its partition and the cause (docs/semantics.md, "Damaged input files")."""

    def __init__(self, path: str, cause: str, done: str = "nothing was replayed"):
        self.path, self.cause = path, cause
        super().__init__("source.path", f"damaged input file {path} (partition {partition_of(path)}): {cause}; "
                                        f"{done}. Fix or replace the file and run again")


def hidden(name: str) -> bool:
    return name.startswith("_") or name.startswith(".")  # as Spark's file index: _SUCCESS, .crc, _staging...


def list_files(folder: Path) -> list[dict[str, Any]]:
    """The data files under a local folder, recursively (hidden names skipped, as `data_files`), with their size and
    modification time: what a run record and a dry run list without Spark."""
    found = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not hidden(d))
        for name in sorted(names):
            if hidden(name):
                continue
            p = Path(root, name)
            st = p.stat()
            found.append({"path": p.relative_to(folder).as_posix(), "size": st.st_size, "mtime_ns": st.st_mtime_ns})
    return found


def input_bytes(path: str, subpaths: Sequence[str] | None = None) -> int | None:
    """The bytes a job reads from a local source: its data files under `path`, or under each of `subpaths` (the
    partitions' folders; a missing one reads nothing). None when that is not known without Spark: a remote path
    or a glob. What the driver's JVM is chosen by (driver_jvm.py), before it starts."""
    if not is_local(path):
        return None
    root = Path(local_path(path))
    if subpaths is None:
        if root.is_file():
            return root.stat().st_size
        return sum(f["size"] for f in list_files(root)) if root.is_dir() else None
    return sum(f["size"] for sub in subpaths for f in list_files(root / sub))


def data_files(spark: SparkSession, path: str) -> list[str]:
    """The data files under a file, folder or glob (recursively; hidden names skipped), sorted."""
    fs, p = hadoop_fs(spark, path)
    matches = fs.globStatus(p)
    out = []
    for st in (matches or []):
        if st.isFile():
            out.append(st.getPath().toString())
            continue
        root = st.getPath().toUri().getPath().rstrip("/")
        it = fs.listFiles(st.getPath(), True)
        while it.hasNext():
            f = it.next().getPath()
            rel = f.toUri().getPath()[len(root):].strip("/").split("/")
            if not any(hidden(part) for part in rel):
                out.append(f.toString())
    return sorted(out)


def parquet_rows(spark: SparkSession, folder: str) -> int:
    """The rows of a Parquet folder, from its files' footers: a few small reads in the driver's JVM, no Spark job
    (a job costs a scheduling round trip, which small partitions pay several times)."""
    return parquet_file_rows(spark, data_files(spark, folder))


def parquet_file_rows(spark: SparkSession, files: list[str]) -> int:
    """The rows of these Parquet files, from their footers (no Spark job)."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    total = 0
    for f in files:
        source = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(jvm.org.apache.hadoop.fs.Path(f), conf)
        reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(source)
        try:
            total += reader.getRecordCount()
        finally:
            reader.close()
    return total


def inferred_schema(spark: SparkSession, path: str) -> T.StructType:
    """The schema Spark's inference gives a read whose one data file is the Parquet file `path` (Spark's own footer
    conversion, ParquetFileFormat.readSchemaFromFooter, on the session's settings), read on the driver: Spark's
    inference runs a Spark job to read that one footer."""
    jvm = spark.sparkContext._jvm
    parquet = jvm.org.apache.spark.sql.execution.datasources.parquet
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    source = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(
        hpath, spark.sparkContext._jsc.hadoopConfiguration())
    reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(source)
    try:
        footer = jvm.org.apache.parquet.hadoop.Footer(hpath, reader.getFooter())
    finally:
        reader.close()
    converter = parquet.ParquetToSparkSchemaConverter(spark._jsparkSession.sessionState().conf())
    schema = parquet.ParquetFileFormat.readSchemaFromFooter(footer, converter)
    return T.StructType.fromJson(json.loads(schema.asNullable().json()))  # a file source's columns are nullable


def partition_of(path: str) -> str:
    """The `dt=`/`hour=` part of a file's path ('-' if none), to report where a bad file is."""
    parts = [c for c in path.split("/") if "=" in c and not hidden(c)]
    return "/".join(parts) or "-"


def _arrow_type_name(t) -> str:
    """An Arrow type under the name of the Spark type it reads as (units and large variants do not matter)."""
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz else "timestamp_ntz"
    if pa.types.is_large_string(t) or pa.types.is_string(t):
        return "string"
    if pa.types.is_large_binary(t) or pa.types.is_binary(t):
        return "binary"
    if pa.types.is_dictionary(t):
        return _arrow_type_name(t.value_type)
    return str(t)


def damage(spark: SparkSession, path: str, fmt: str) -> str | None:
    """Why a source file cannot be read (None: it can): its Parquet footer, or for CSV its first byte, is read.
    A local file is opened by Python (no JVM); elsewhere a Parquet footer is read through Hadoop's FileSystem."""

    if not is_local(path):
        if fmt != "parquet":
            return None
        jvm = spark.sparkContext._jvm
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        try:
            f = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(jvm.org.apache.hadoop.fs.Path(path), conf)
            jvm.org.apache.parquet.hadoop.ParquetFileReader.open(f).close()
        except Exception as exc:  # noqa: BLE001 - py4j wraps the Java exception: its first line is the cause
            return f"unreadable ({str(exc).strip().splitlines()[-1][:300]})"
        return None
    p = local_path(path)
    try:
        with open(p, "rb") as f:
            head = f.read(4)
            if fmt != "parquet":
                return None
            size = f.seek(0, 2)
            if size >= 12:
                f.seek(size - 4)
                tail = f.read(4)
            else:
                tail = b""
    except PermissionError:
        return "unreadable: permission denied"
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if size == 0:
        return "empty file (0 bytes): not a Parquet file"
    if head != b"PAR1":
        return "not a Parquet file (no PAR1 magic at its start)"
    if tail != b"PAR1":
        return f"truncated Parquet file ({size} bytes, no footer at its end)"
    try:

        pq.read_metadata(p)
    except Exception as exc:  # noqa: BLE001 - a footer pyarrow cannot decode
        return f"damaged Parquet footer ({str(exc).strip()[:300]})"
    return None


def check_readable(spark: SparkSession, files: list[str], fmt: str, done: str = "nothing was replayed") -> None:
    """DamagedFileError for the first file (in order) that cannot be read."""
    for f in files:
        cause = damage(spark, f, fmt)
        if cause is not None:
            raise DamagedFileError(f, cause, done)


def file_column_types(spark: SparkSession, path: str) -> dict[str, str]:
    """A Parquet file's column types, from its footer only: with pyarrow for a local file (no Spark job), else
    through Spark's own schema inference on that one file. A file that cannot be read: DamagedFileError."""

    try:
        if is_local(path):

            schema = pq.read_schema(local_path(path))
            return {f.name: _arrow_type_name(f.type) for f in schema}
        return {f.name: f.dataType.simpleString() for f in spark.read.parquet(path).schema.fields}
    except Exception as exc:  # noqa: BLE001 - say which file and why, not a reader's traceback
        raise DamagedFileError(path, damage(spark, path, "parquet") or f"unreadable ({str(exc).strip()[:300]})") \
            from None


def check_schema_drift(spark: SparkSession, files: list[str], fmt: str, reference: str | None = None) -> None:
    """Refuse a source whose files disagree on a column's type (schema drift), naming the file and partition.

    Spark reads a folder with the schema of one of its files and then either fails deep inside a task or
    converts silently; every file's footer is compared instead with the reference file (by default the first),
    one small read each. Columns present in some files only are not drift (Spark fills them with nulls). CSV
    columns are all strings as read: no drift. Every file is checked readable first (check_readable)."""
    check_readable(spark, files, fmt)
    if fmt != "parquet" or not files:
        return
    reference = reference or files[0]
    ref_types = file_column_types(spark, reference)
    for f in files:
        if f == reference:
            continue
        for name, got in file_column_types(spark, f).items():
            want = ref_types.get(name)
            if want is not None and got != want:
                raise SchemaDriftError(
                    f"schema drift: column {name!r} is {got} in {f} (partition {partition_of(f)}) but {want} in "
                    f"{reference} (partition {partition_of(reference)}); rewrite the file with one type "
                    "(nothing was replayed)")


def _sibling_partitions(spark: SparkSession, root: str, subpath: str) -> list[str]:
    """The other partition folders of the source (same granularity as subpath), nearest first: earlier ones
    from the nearest back, then later ones."""
    ids = partitions_present(fs_for(root, spark), root, hourly="/" in subpath)
    names = [folder_of(i) for i in ids]
    before = [n for n in names if n < subpath][::-1]
    after = [n for n in names if n > subpath]
    return before + after


def neighbour_file(spark: SparkSession, cfg: JobConfig, subpath: str, earlier_only: bool = False,
                    limit: int = 48) -> str | None:
    """The first data file of the nearest partition that has one (earlier first), within `limit` partitions."""
    root = cfg.source.path.rstrip("/")
    names = _sibling_partitions(spark, root, subpath)
    if earlier_only:
        names = [n for n in names if n < subpath]
    for name in names[:limit]:
        files = data_files(spark, f"{root}/{name}")
        if files:
            return files[0]
    return None


def csv_reader(spark: SparkSession):
    # No schema inference: every column stays a string as written (see read_raw).
    return spark.read.option("header", True).option("mode", "PERMISSIVE")
