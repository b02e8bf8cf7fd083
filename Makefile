# GNU make. Everything the project needs is installed from uv.lock by these targets: nothing by hand.
SHELL := /bin/bash
.DEFAULT_GOAL := install

# Python 3.11 (the lock is for 3.11 only): python3.11 if on PATH, else python3 if that is 3.11.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null)
UV_VERSION := 0.13.9
TOOLS := $(CURDIR)/.tools
UV := $(TOOLS)/bin/uv
VENV := $(CURDIR)/.venv
PYTEST_ARGS ?= -q
DEMO_ROWS ?= 20000

# uv must never fetch a Python of its own (CI has no network beyond the package registries);
# scripts called from here (tests/flink/build.sh) find uv on PATH.
export UV_PYTHON_DOWNLOADS := never
export PATH := $(TOOLS)/bin:$(PATH)

.PHONY: install test demo clean distclean check-python check-java sync

install: check-python check-java sync

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
sync: $(UV)
	$(UV) sync --frozen --python "$$($(PYTHON) -c 'import sys; print(sys.executable)')"
	@$(VENV)/bin/python -c "import pyspark" || \
	  { echo "error: .venv has no usable pyspark after uv sync (pyspark and pyspark-client share the pyspark/ folder: try make distclean install)" >&2; exit 1; }
	@test -x $(VENV)/bin/replay || { echo "error: console script .venv/bin/replay was not installed" >&2; exit 1; }

test: install
	@if [ -f tests/flink/build.sh ]; then UV=$(UV) bash tests/flink/build.sh; fi
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

demo: install
	$(VENV)/bin/replay sample --out data/sample --rows $(DEMO_ROWS) --splits 4 --seed 7
	$(VENV)/bin/replay run --config jobs/configs/demo.yaml
	@echo "demo outputs (Parquet) under $(CURDIR)/out/demo: windows/ late_events/ watermarks/ quarantine/ counts/"

# Generated data and caches; distclean also drops the environments.
clean:
	rm -rf data/sample out build spark-warehouse metastore_db derby.log .pytest_cache .hypothesis
	find . -name __pycache__ -type d -not -path './.venv*' -not -path './.tools/*' -prune -exec rm -rf {} +

distclean: clean
	rm -rf .venv .venv-flink .tools
