"""Orchestration around the replay job: everything the Airflow DAGs do besides wiring tasks.

The DAG files in dags/ stay thin; the logic lives here and is unit-tested without Airflow running:
- params:   the backfill request (config + overrides + date range), validated before any Spark job starts;
- plan:     which `dt=` partitions to replay, in order, and the state each one needs (history/ says which
            partition comes before: the same rule as `replay run`'s);
- report:   what the replay left under the output path, per partition;
- sample:   a multi-day sample log in the partitioned layout (for `make demo` and the tests);
- failures: a failed task's cause in one line, kept for the Replay runs page;
- record:   the run record (version, config, input fingerprint, Spark) and `replay verify`;
- cancel:   a SIGTERM stops a replay and leaves its output consistent; the task's on_kill side;
- standalone: `make airflow` (every process stops with it; `make demo`'s `airflow dags test` is scripts/dag_test.py);
- operators / tasks: the Airflow side (imported only by the DAGs).
"""
