"""The decoded content of a job's outputs, to compare a run with an uninterrupted one (as tests/io/test_crash_safety.py
does): every folder -> the sorted digests of its files, a Parquet file digested as its decoded table (schema with its
metadata, rows in file order) in Arrow IPC, any other file as its bytes. Not raw Parquet bytes: parquet-mr writes a
column chunk's list of encodings in a hash set's order, which changes from one JVM to the next.

Also used by scripts/soak.py (run from the project root with tests/reliability on its path)."""
from __future__ import annotations

import hashlib
from pathlib import Path

SKIP_PREFIXES = ("_staging-", "_lock", "_commit", "_range.json", "_airflow")


def content_digest(f: Path, strict: bool = True) -> str:
    """`strict=False`: the schema's nullability and metadata left out (column names, types and rows only)."""
    if f.suffix != ".parquet":
        return hashlib.sha256(f.read_bytes()).hexdigest()
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(f)
    if not strict:
        table = table.cast(pa.schema([pa.field(x.name, x.type) for x in table.schema]))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


def digests(out: Path, strict: bool = True) -> dict[str, list[str]]:
    """Every folder of the outputs (relative) -> the sorted content digests of its files; the lock, journals,
    staging and the Airflow run folders are left out, as are .crc files (part names carry a random id)."""
    d: dict[str, list[str]] = {}
    for f in sorted(Path(out).rglob("*")):
        rel = f.relative_to(out)
        if not f.is_file() or rel.parts[0].startswith(SKIP_PREFIXES) or f.name.endswith(".crc"):
            continue
        d.setdefault(str(rel.parent), []).append(content_digest(f, strict))
    return {k: sorted(v) for k, v in d.items()}


def partition_digests(out: Path, day: str, strict: bool = True) -> dict[str, list[str]]:
    """The digests of one partition's datasets (`<dataset>/dt=<day>`) and its state, if it has one."""
    return {k: v for k, v in digests(out, strict).items()
            if f"dt={day}" in k.split("/") or k == f"_state/{day}" or k.startswith(f"_state/{day}/")}
