"""The backfill DAGs' outputs as Airflow Assets: one per output dataset (windows, late_events, watermarks,
quarantine, counts), the outlets of the replay task, so that a DAG can be scheduled on a completed backfill.

An Asset is fixed when the DAG file is parsed, but the output path is not: it comes from the run's config (a form
field), so one DAG writes wherever the run's config says. The Assets therefore name the *logical* dataset
(`x-event-replay://outputs/windows`, name `event_replay.windows`, group `event_replay`), the same for every run and
both backfill DAGs, and each asset event says where this run wrote it and what it replayed, in its `extra`:

    {"output_path": "/data/out/demo", "path": "/data/out/demo/windows", "dataset": "windows",
     "partitions": {"first": "2024-01-01", "last": "2024-01-31", "count": 31}, "missing_days": [],
     "config_file": "jobs/configs/demo_partitioned.yaml"}

A URI made from the default config's output path would be wrong for every run that picks another config. (An
AssetAlias resolved at run time to `file://<output>/windows` would name the real place, but a downstream DAG then
has to know that path when it is parsed, and every new output path makes a new Asset.) See dags/README.md.
"""
from __future__ import annotations

from typing import Any, Mapping

from airflow.sdk import Asset

from ..layout import DATASETS


GROUP = "event_replay"
SCHEME = "x-event-replay"  # an `x-` scheme: Airflow keeps the URI as it is (no normalizer), and it is no file path


def output_asset(dataset: str) -> Asset:
    """The Asset of one output dataset, e.g. `Asset(name="event_replay.windows", uri="x-event-replay://outputs/windows")`."""
    if dataset not in DATASETS:
        raise ValueError(f"not an output dataset: {dataset!r} (one of {', '.join(DATASETS)})")
    return Asset(name=f"{GROUP}.{dataset}", uri=f"{SCHEME}://outputs/{dataset}", group=GROUP)


OUTPUT_ASSETS: tuple[Asset, ...] = tuple(output_asset(d) for d in DATASETS)


def event_extra(p: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    """The extra of the asset event a run emits for `dataset`: where it wrote it, and the partition range it
    replayed (every planned partition: the event is emitted only when all of them are committed)."""
    partitions = [r["partition"] for r in p["plan"]["runs"]]
    output = str(p["output_path"]).rstrip("/")
    return {"output_path": output, "path": f"{output}/{dataset}", "dataset": dataset,
            "partitions": {"first": partitions[0], "last": partitions[-1], "count": len(partitions)},
            "missing_days": list(p["plan"].get("missing") or []), "config_file": p.get("config_file")}


def outlet_extras(p: Mapping[str, Any]) -> dict[Asset, dict[str, Any]]:
    """Each output Asset with the extra of its event for the replayed run `p` (the plan task's output)."""
    return {asset: event_extra(p, dataset) for dataset, asset in zip(DATASETS, OUTPUT_ASSETS)}
