#!/usr/bin/env bash
# Builds what the Flink differential tests need; idempotent and cheap when nothing changed.
#   1. .venv-flink: a separate venv with apache-flink (it cannot share the main venv), from requirements-flink.txt
#   2. build/flink-harness/: the Java harness compiled against the jars pyflink ships
# Env: UV (uv binary, default `uv`), FLINK_VENV (default <repo>/.venv-flink), FLINK_HARNESS_OUT (default <repo>/build/flink-harness)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
UV="${UV:-uv}"
VENV="${FLINK_VENV:-$ROOT/.venv-flink}"
OUT="${FLINK_HARNESS_OUT:-$ROOT/build/flink-harness}"
REQ="$ROOT/requirements-flink.txt"
SRC="$ROOT/tests/flink/harness"

die() { echo "tests/flink/build.sh: $*" >&2; exit 1; }

command -v java >/dev/null 2>&1 || die "java not found on PATH (Java 17 is needed to run Flink's classes)"
command -v javac >/dev/null 2>&1 || die "javac not found on PATH (a JDK 17, not only a JRE, is needed to compile the harness)"
[ -f "$REQ" ] || die "missing $REQ"

# 1. The venv: (re)created when missing or when the lock changed since it was synced (stamp = copy of the lock).
STAMP="$VENV/.requirements-flink.txt"
if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$REQ" "$STAMP"; then
  command -v "$UV" >/dev/null 2>&1 || die "uv not found (set UV=/path/to/uv)"
  echo "tests/flink/build.sh: syncing $VENV from requirements-flink.txt" >&2
  [ -x "$VENV/bin/python" ] || "$UV" venv -q -p python3.11 "$VENV"
  "$UV" pip sync -q --python "$VENV/bin/python" "$REQ"
  cp "$REQ" "$STAMP"
fi

LIB="$("$VENV/bin/python" -c 'import os, pyflink; print(os.path.join(os.path.dirname(pyflink.__file__), "lib"))')"
[ -f "$LIB/flink-dist-2.3.0.jar" ] || die "flink-dist-2.3.0.jar not found in $LIB"

# 2. Compile when a source is newer than the stamp, or the classpath changed.
CP="$(ls "$LIB"/*.jar | sort | tr '\n' ':')"
mkdir -p "$OUT"
CLASSES="$OUT/classes"
BSTAMP="$OUT/.built"
need=0
[ -f "$BSTAMP" ] || need=1
if [ $need = 0 ]; then
  [ "$(head -n1 "$BSTAMP")" = "$CP" ] || need=1
  [ -n "$(find "$SRC" -name '*.java' -newer "$BSTAMP" | head -n1)" ] && need=1
fi
if [ $need = 1 ]; then
  echo "tests/flink/build.sh: compiling the harness into $CLASSES" >&2
  rm -rf "$CLASSES"; mkdir -p "$CLASSES"
  javac -nowarn -encoding UTF-8 -source 17 -target 17 -cp "$CP" -d "$CLASSES" "$SRC"/*.java
  printf '%s\n' "$CP" > "$BSTAMP"
fi
# The classpath a run needs: harness classes + Flink's jars.
printf '%s%s\n' "$CLASSES:" "$CP" > "$OUT/classpath.txt"
