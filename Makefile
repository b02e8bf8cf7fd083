# GNU make. Everything the project needs is installed from uv.lock by these targets: nothing by hand.
SHELL := /bin/bash
.DEFAULT_GOAL := install

# Python 3.11 (the lock is for 3.11 only): python3.11 if on PATH, else python3 if that is 3.11.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null)
UV_VERSION := 0.13.9
TOOLS := $(CURDIR)/.tools
UV := $(TOOLS)/bin/uv
VENV := $(CURDIR)/.venv
PYTEST_ARGS ?= -q --durations=30
DEMO_ROWS ?= 20000
# Airflow (make demo / make airflow): project-local home, the project's DAGs and plugins, Spark jobs on local[*]
# through the replay_spark connection (set AIRFLOW_CONN_REPLAY_SPARK for spark://, yarn or k8s:// masters).
AIRFLOW_HOME_DIR ?= $(CURDIR)/.airflow
AIRFLOW_PORT ?= 8080
REPLAY_SPARK_SLOTS ?= 1
REPLAY_SPARK_CONN ?= {"conn_type": "spark", "host": "local[*]"}
DEMO_DAYS ?= 3
DEMO_ROWS_PER_DAY ?= 5000
DEMO_START ?= 2024-01-01
DEMO_END ?= $(shell date -u -d "$(DEMO_START) +$$(( $(DEMO_DAYS) - 1 )) days" +%F 2>/dev/null)
# The demo's run is recorded when it starts (its logical date, taken just before the DAG runs unless
# DEMO_LOGICAL_DATE is given), like a run triggered from the UI: the data range it replays is DEMO_START..DEMO_END,
# given in DEMO_CONF (the DAG's start_date/end_date params), not by the logical date.
DEMO_LOGICAL_DATE ?=
# Versus live (README, "Does it match production?"): the run is compared with jobs/live/demo/, a stand-in for the live
# Flink job's output, made by Flink's own classes from this sample with OTHER settings (idle timeout 30 s, max
# out-of-orderness 1 s; jobs/live/demo/README.md; `make demo-live` remakes it), and a small grid is ranked against it
# by the DAG's calibrate task before the comparison (four more replays; `make demo DEMO_CALIBRATE=` leaves it out).
DEMO_LIVE ?= "live_path": "jobs/live/demo/firings", "live_format": "json", "live_late_path": "jobs/live/demo/late", \
  "live_columns": "key=key_id,window_start=win_start,window_end=win_end,cnt=events,total=amount,fire_watermark=wm", \
  "live_keeps_updates": true, "live_min_agreement": 90
DEMO_CALIBRATE ?= 1
comma := ,
DEMO_CALIBRATION := $(if $(DEMO_CALIBRATE),$(comma) "calibrate_max_out_of_orderness": "500ms$(comma)1s"$(comma) "calibrate_idle_timeout": "5s$(comma)30s")
DEMO_CONF ?= {"config": "jobs/configs/demo_partitioned.yaml", "start_date": "$(DEMO_START)", "end_date": "$(DEMO_END)", "dq_warn_only": false, $(DEMO_LIVE)$(DEMO_CALIBRATION)}
# The demo's Spark jobs run without the Spark UI (their driver JVMs' compiler and collector are chosen by the input's
# size, for every job: src/event_replay/driver_jvm.py). A REPLAY_SPARK_CONF of your own replaces it.
DEMO_SPARK_CONF ?= {"spark.ui.enabled": "false"}
# The LocalExecutor starts [core] parallelism worker processes at once (Airflow's default 32, ~1.8 GB): one per core
# here (at least 2); the replay_spark pool still runs REPLAY_SPARK_SLOTS Spark jobs at a time.
AIRFLOW_PARALLELISM ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ "$$n" -lt 2 ] && n=2; echo $$n)
AIRFLOW_ENV = AIRFLOW_HOME=$(AIRFLOW_HOME_DIR) AIRFLOW__CORE__DAGS_FOLDER=$(CURDIR)/dags \
  AIRFLOW__CORE__PLUGINS_FOLDER=$(CURDIR)/plugins AIRFLOW__CORE__LOAD_EXAMPLES=False \
  AIRFLOW__CORE__PARALLELISM=$(AIRFLOW_PARALLELISM) \
  AIRFLOW_CONN_REPLAY_SPARK='$(REPLAY_SPARK_CONN)' PATH="$(VENV)/bin:$$PATH"

# uv must never fetch a Python of its own (CI has no network beyond the package registries);
# scripts called from here (tests/flink/build.sh) find uv on PATH.
export UV_PYTHON_DOWNLOADS := never
export PATH := $(TOOLS)/bin:$(PATH)

.PHONY: install jvm class-archive test test-all test-slow test-integration soak tune demo demo-live airflow airflow-init bench clean distclean check-python check-java sync data-docs-assets

install: check-python check-java sync jvm class-archive

# The engine's Spark extension (jvm/src: the offset check's read-order pass, the session walk), compiled against
# the venv's pyspark into src/event_replay/jvm/; rebuilt only when a source or pyspark changed. Without javac it is
# skipped with a note: replays then sort every split to check offsets (same results, slower) and refuse session windows.
jvm: sync
	@bash jvm/build.sh $(VENV)/bin/python

# The driver JVMs' class archive (src/event_replay/class_archive.py): Spark's classes dumped by a small replay once,
# mapped by every later driver (about 2 s less per start); built when missing (about 20 s), kept in .venv.
class-archive: sync jvm
	@$(VENV)/bin/python -m event_replay.class_archive

check-python:
	@if [ -z "$(PYTHON)" ]; then echo "error: Python 3.11 is required (python3.11 not found on PATH)" >&2; exit 1; fi
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' || \
	  { echo "error: Python 3.11 is required, $(PYTHON) is $$($(PYTHON) --version 2>&1)" >&2; exit 1; }

check-java:
	@command -v java >/dev/null 2>&1 || \
	  { echo "error: java not found on PATH: Spark needs a Java 17+ runtime (e.g. apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
	@v=$$(java -version 2>&1 | awk -F'"' '/version/ {print $$2; exit}'); \
	  major=$${v%%.*}; if [ "$$major" = "1" ]; then major=$$(echo "$$v" | cut -d. -f2); fi; \
	  if ! [ "$$major" -ge 17 ] 2>/dev/null; then \
	    echo "error: Java 17+ is required for Spark 4, found java version '$$v'" >&2; exit 1; fi

# uv itself lives in a private venv so that nothing has to be installed by hand; only (re)installed when missing.
$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet uv==$(UV_VERSION)

# uv sync is idempotent and fast when .venv is up to date, so it runs every time (uv.lock is the truth).
# uv's package list goes to a log file (shown only when the sync fails): the targets' output starts with what matters.
# Bytecode is compiled here, the venv's and the project's (a second run only checks it is current): every Python
# process of make demo (Airflow, each task, each spark-submit's driver) otherwise compiles what it imports, each
# time where PYTHONDONTWRITEBYTECODE is set, about half of its start (BENCHMARKS.md, "make demo").
SYNC_LOG := build/uv-sync.log
BYTECODE_DIRS := src dags plugins jobs scripts
sync: $(UV)
	@mkdir -p $(dir $(SYNC_LOG)); $(UV) sync --frozen --compile-bytecode \
	  --python "$$($(PYTHON) -c 'import sys; print(sys.executable)')" \
	  > $(SYNC_LOG) 2>&1 || { cat $(SYNC_LOG) >&2; echo "error: uv sync failed (log: $(SYNC_LOG))" >&2; exit 1; }
	@$(VENV)/bin/python -m compileall -q -j 0 $(BYTECODE_DIRS) >> $(SYNC_LOG) 2>&1 || \
	  { cat $(SYNC_LOG) >&2; echo "error: compiling the project's Python failed (log: $(SYNC_LOG))" >&2; exit 1; }
	@echo "install: .venv in sync with uv.lock (uv's log: $(SYNC_LOG))"
	@$(VENV)/bin/python -c "import pyspark" || \
	  { echo "error: .venv has no usable pyspark after uv sync (pyspark and pyspark-client share the pyspark/ folder: try make distclean install)" >&2; exit 1; }
	@test -x $(VENV)/bin/replay || { echo "error: console script .venv/bin/replay was not installed" >&2; exit 1; }

# `make test` (what CI runs, < 30 min on 2 cores): the semantics, the engine, the Flink differential tests,
# IO/CLI/determinism/reliability/crash safety, DAG parsing, tuning, and `replay run` on a real Spark standalone cluster.
# `make test-integration`: the end-to-end suites (marker `integration`: Airflow DAG runs on SQLite, on PostgreSQL and
# with the LocalExecutor against a standalone cluster, GX, the plugin in headless Chromium); each is minutes long on
# 2 cores. `make test-slow`: the exhaustive variants (marker `slow`: every crash point of the commit).
# `make test-all`: everything.
test: install
	@if [ -f tests/flink/build.sh ]; then UV=$(UV) bash tests/flink/build.sh; fi
	$(VENV)/bin/python -m pytest -m "not integration and not slow" $(PYTEST_ARGS)

test-integration: install data-docs-assets
	@if [ -f tests/flink/build.sh ]; then UV=$(UV) bash tests/flink/build.sh; fi
	$(VENV)/bin/python -m pytest -m "integration and not slow" $(PYTEST_ARGS)

test-slow: install
	$(VENV)/bin/python -m pytest -m slow $(PYTEST_ARGS)

test-all: install data-docs-assets
	@if [ -f tests/flink/build.sh ]; then UV=$(UV) bash tests/flink/build.sh; fi
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

# make soak (not in CI; RELIABILITY.md): backfill DAG runs at once for 30 minutes on Airflow (LocalExecutor,
# PostgreSQL on 127.0.0.1:5442) against a Spark standalone cluster (master 127.0.0.1:7177, UI 8277; Airflow's API on
# 8290), half of them on one output, while the scheduler and Spark drivers are killed with SIGKILL at random; then every
# output is checked against an uninterrupted run. Figures in build/soak/soak.md and soak.json. Under nice: the machine
# may be shared. SOAK_ARGS changes it, e.g. SOAK_ARGS="--minutes 5". A short version runs in make test-integration.
SOAK_ARGS ?= --minutes 30 --active 6
soak: install
	nice -n 10 $(VENV)/bin/python scripts/soak.py $(SOAK_ARGS) --work build/soak

# make tune: the what-if grid on the demo sample log (replay tune: one Spark application, the input read once);
# the table, CSV/Parquet and the plot land under out/demo/_tuning/<grid>/. The plain run comes first (a run replaces
# its output folder, _tuning/ included); the why-report then shows the grid too.
TUNE_DELAYS ?= 1s,5s,30s
TUNE_IDLE ?= none,30s,2m
tune: install
	$(VENV)/bin/replay sample --out data/sample --rows $(DEMO_ROWS) --splits 4 --seed 7
	$(VENV)/bin/replay run --config jobs/configs/demo.yaml --master "local[*]"
	$(VENV)/bin/replay tune --config jobs/configs/demo.yaml --max-out-of-orderness $(TUNE_DELAYS) \
	  --idle-timeout $(TUNE_IDLE) --master "local[*]"
	$(VENV)/bin/replay why --config jobs/configs/demo.yaml
	@cat out/demo/_tuning/delay_*/tuning.md
	@echo "tune: table, CSV/Parquet and plot under $(CURDIR)/out/demo/_tuning/; why-report: $(CURDIR)/out/demo/why_report/index.html"

# make bench: exact replay vs naive Spark vs the Flink job vs a scan floor on generated logs (BENCHMARKS.md).
# Long: tens of minutes for 10M rows on 2 cores. BENCH_ARGS overrides the sizes, e.g. BENCH_ARGS="--rows 1000000 --reps 1".
BENCH_ARGS ?= --rows 1000000 --rows 10000000 --reps 3
bench: install
	UV=$(UV) bash tests/flink/build.sh
	$(VENV)/bin/python bench/run.py $(BENCH_ARGS)

# make demo: a multi-day partitioned sample log, replayed partition by partition by the event_time_backfill DAG
# (airflow dags test: real task execution, one spark-submit per chunk of partitions_per_job days; through
# scripts/dag_test.py so the task logs show in the UI) on a project-local Airflow (SQLite).
# The sample log is generated again only when its arguments, its generator, the lock or its files changed (a stamp
# beside the folder: the folder is replaced whole).
DEMO_SAMPLE_ARGS = --first-day $(DEMO_START) --days $(DEMO_DAYS) --rows-per-day $(DEMO_ROWS_PER_DAY) --splits 4 --seed 7
DEMO_SAMPLE_FROM := src/event_replay/samples/log.py src/event_replay/samples/days.py uv.lock
DEMO_SAMPLE_STAMP := data/.partitioned.sample
demo: install airflow-init data-docs-assets
	@echo "demo: a $(DEMO_DAYS)-day sample log ($(DEMO_START)..$(DEMO_END)) replayed by event_time_backfill"
	@sample() { echo "$(DEMO_SAMPLE_ARGS)" $$(cat $(DEMO_SAMPLE_FROM) | sha1sum) \
	  $$(find data/partitioned -type f -printf '%P %s %T@\n' 2>/dev/null | sort | sha1sum); }; \
	if [ -f $(DEMO_SAMPLE_STAMP) ] && [ "$$(cat $(DEMO_SAMPLE_STAMP))" = "$$(sample)" ]; then \
	  echo "demo: the sample log in data/partitioned is current (not generated again)"; else \
	  $(VENV)/bin/python -m event_replay.samples.days --out data/partitioned $(DEMO_SAMPLE_ARGS) || exit 1; \
	  sample > $(DEMO_SAMPLE_STAMP); fi
	@start=$$(date +%s); logical="$(DEMO_LOGICAL_DATE)"; logical="$${logical:-$$(date -u +%FT%T+00:00)}"; \
	echo "demo: event_time_backfill, logical date $$logical (its run id is stamped when the run starts)"; \
	demo_spark_conf='$(DEMO_SPARK_CONF)'; \
	REPLAY_SPARK_CONF="$${REPLAY_SPARK_CONF:-$$demo_spark_conf}" \
	  $(AIRFLOW_ENV) $(VENV)/bin/python scripts/dag_test.py event_time_backfill "$$logical" -c '$(DEMO_CONF)' \
	  > $(AIRFLOW_HOME_DIR)/demo-dags-test.log 2>&1 || { tail -n 80 $(AIRFLOW_HOME_DIR)/demo-dags-test.log; \
	  echo "demo: the DAG run failed; full log: $(AIRFLOW_HOME_DIR)/demo-dags-test.log" >&2; exit 1; }; \
	echo "demo: event_time_backfill ran in $$(( $$(date +%s) - start )) s (log: $(AIRFLOW_HOME_DIR)/demo-dags-test.log)"
	@report=$$(ls -t out/demo_partitioned/_airflow/*/report.md | head -n 1); \
	$(VENV)/bin/python -c 'import json,sys; r=json.load(open(sys.argv[1])); print("demo: run", r["run_id"])' \
	  "$$(dirname "$$report")/report.json"; cat "$$report"; \
	run=$$(dirname "$$report"); if [ -f "$$run/compare/summary.json" ]; then \
	  $(VENV)/bin/python -c 'import json,sys; s=json.load(open(sys.argv[1])); from event_replay.compare.summary import comparison_line; print("demo versus live (jobs/live/demo, a stand-in made by Flink with other settings):", comparison_line(s))' "$$run/compare/summary.json"; \
	  if [ -n "$(DEMO_CALIBRATE)" ]; then cat out/demo_partitioned/_tuning/*/calibration.md 2>/dev/null | sed -n 3p; \
	  else echo "which settings did the live job run with? make demo DEMO_CALIBRATE=1 ranks a grid against it"; fi; fi; \
	echo "demo outputs (Parquet, one dt= folder per partition) under $(CURDIR)/out/demo_partitioned:" \
	  "windows/ late_events/ watermarks/ quarantine/ counts/, carried state in _state/"; \
	echo "demo report: $(CURDIR)/$$(dirname "$$report")/report.html (report.md, report.json next to it)"

# make demo-live: remake jobs/live/demo/ (the demo's stand-in live output) with Flink's own classes: after a change to
# the sample generator (tests/compare/test_demo_live.py fails when it is stale).
demo-live: install
	UV=$(UV) bash tests/flink/build.sh
	$(VENV)/bin/python scripts/make_demo_live.py

# GX Data Docs that render offline (air-gapped clusters): the CSS/JS GX loads from CDNs, at the same versions, from
# npm (`npm pack`) into build/data_docs_static/; `replay validate` and the DAGs' data-quality task copy them into every
# Data Docs site (event_replay/quality/docs_assets.py). Without them the docs keep their CDN links. Built once (a stamp
# file; rebuilt when docs_assets.py changes the list): the integration suites need them (the browser test asserts
# styled Data Docs offline), so test-integration and test-all depend on this target.
DOCS_ASSETS := build/data_docs_static
# The stamp stays outside the folder: localize copies the folder whole into every site.
DOCS_ASSETS_STAMP := build/.data_docs_static.built
data-docs-assets: $(DOCS_ASSETS_STAMP)
$(DOCS_ASSETS_STAMP): src/event_replay/quality/docs_assets.py | install
	@command -v npm >/dev/null 2>&1 || { echo "error: npm not found: the Data Docs assets come from npm (apt-get install npm)" >&2; exit 1; }
	@echo "data-docs-assets: GX's CSS/JS from npm into $(DOCS_ASSETS)"
	@$(VENV)/bin/python -m event_replay.quality.docs_assets $(DOCS_ASSETS) >/dev/null
	@touch $@

# A project-local Airflow: metadata DB (SQLite) under .airflow/, the replay_spark pool for the Spark jobs.
# Skipped when the DB is current (scripts/airflow_db_current.py: same Airflow, same revision, same pool).
airflow-init: install
	@mkdir -p $(AIRFLOW_HOME_DIR) && echo '*' > $(AIRFLOW_HOME_DIR)/.gitignore
	@if $(VENV)/bin/python scripts/airflow_db_current.py $(AIRFLOW_HOME_DIR) $(REPLAY_SPARK_SLOTS) check; then \
	  echo "airflow: metadata DB and pool replay_spark current in $(AIRFLOW_HOME_DIR) (not migrated again)"; else \
	  $(AIRFLOW_ENV) $(VENV)/bin/airflow db migrate > $(AIRFLOW_HOME_DIR)/db-migrate.log 2>&1 || \
	    { tail -n 40 $(AIRFLOW_HOME_DIR)/db-migrate.log; exit 1; }; \
	  $(AIRFLOW_ENV) $(VENV)/bin/airflow pools set replay_spark $(REPLAY_SPARK_SLOTS) "Concurrent replay Spark jobs" >/dev/null \
	    || exit 1; \
	  $(VENV)/bin/python scripts/airflow_db_current.py $(AIRFLOW_HOME_DIR) $(REPLAY_SPARK_SLOTS) record; \
	  echo "airflow: metadata DB and pool replay_spark ready in $(AIRFLOW_HOME_DIR) (log: $(AIRFLOW_HOME_DIR)/db-migrate.log)"; fi

# make airflow: the UI and scheduler on http://localhost:$(AIRFLOW_PORT) with the project's DAGs and plugins.
# Log in as admin; the generated password is in $(AIRFLOW_HOME_DIR)/simple_auth_manager_passwords.json.generated
# Ctrl+C (or a SIGTERM to make) stops every process it started (orchestration/standalone.py).
airflow: airflow-init
	@echo "airflow: http://localhost:$(AIRFLOW_PORT) user admin, password in $(AIRFLOW_HOME_DIR)/simple_auth_manager_passwords.json.generated"
	@echo "airflow: $(AIRFLOW_PARALLELISM) task processes at most ([core] parallelism); Ctrl+C stops it all"
	$(AIRFLOW_ENV) AIRFLOW__API__PORT=$(AIRFLOW_PORT) AIRFLOW__API__BASE_URL=http://localhost:$(AIRFLOW_PORT) \
	  exec $(VENV)/bin/python -m event_replay.orchestration.standalone

# Generated data and caches; distclean also drops the environments.
clean:
	rm -rf data/sample data/partitioned data/.partitioned.sample .airflow out build spark-warehouse metastore_db derby.log .pytest_cache .hypothesis
	find . -name __pycache__ -type d -not -path './.venv*' -not -path './.tools/*' -prune -exec rm -rf {} +

distclean: clean
	rm -rf .venv .venv-flink .tools
