"""Example: a DAG scheduled on a completed backfill of event_replay's outputs (dags/README.md, "Assets").

`event_time_backfill` and `nightly_event_time_backfill` declare one Airflow Asset per output dataset as the outlets
of their replay task; when the task has committed every planned partition, each Asset gets an event whose extra
says where the run wrote the dataset and which partitions it replayed:

    {"output_path": "/data/out/demo", "path": "/data/out/demo/windows", "dataset": "windows",
     "partitions": {"first": "2024-01-01", "last": "2024-01-31", "count": 31}, "missing_days": [], ...}

This DAG runs after every such event for `windows` and lists the `dt=` folders it may now read. Copy it into your
DAGs folder (it needs Airflow only, not the event_replay package) and replace the task with your own.
"""
from __future__ import annotations

import datetime as dt

import pendulum
from airflow.sdk import DAG, Asset, task

# The same Asset the backfill DAGs' replay task declares (event_replay.orchestration.assets.output_asset("windows")).
REPLAYED_WINDOWS = Asset(name="event_replay.windows", uri="x-event-replay://outputs/windows", group="event_replay")


def partition_folders(extra: dict) -> list[str]:
    """The `dt=` folders of the replayed range under the dataset's path, from an asset event's extra (day ids)."""
    first = dt.date.fromisoformat(extra["partitions"]["first"])
    last = dt.date.fromisoformat(extra["partitions"]["last"])
    days = (first + dt.timedelta(days=i) for i in range((last - first).days + 1))
    return [f"{extra['path']}/dt={d.isoformat()}" for d in days]


with DAG(
    dag_id="after_event_replay_backfill",
    schedule=[REPLAYED_WINDOWS],  # runs when a backfill (manual or nightly) has committed its range
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    tags=["event-replay", "example"],
    doc_md=__doc__,
) as dag:

    @task
    def use_replayed_windows(triggering_asset_events=None) -> list[str]:
        folders = []
        for event in triggering_asset_events[REPLAYED_WINDOWS]:  # more than one if several backfills completed
            r = event.extra["partitions"]
            print(f"windows of {r['first']}..{r['last']} ({r['count']} partitions) in {event.extra['path']}")
            folders += partition_folders(event.extra)
        return folders

    use_replayed_windows()
