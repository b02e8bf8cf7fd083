"""Orchestration around the replay job: everything the Airflow DAGs do besides wiring tasks.

The DAG files in dags/ stay thin; the logic lives here and is unit-tested without Airflow running:
- params:   the backfill request (config + overrides + date range), validated before any Spark job starts;
- plan:     which `dt=` partitions to replay, in order, and the state each one needs;
- report:   what the replay left under the output path, per partition;
- sample:   a multi-day sample log in the partitioned layout (for `make demo` and the tests);
- operators / tasks: the Airflow side (imported only by the DAGs).
"""
