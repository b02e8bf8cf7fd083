#!/usr/bin/env bash
# Compiles the benchmark's Flink job (bench/flink/src) against the jars of .venv-flink (made by tests/flink/build.sh)
# into bench/.build/flink/; writes its classpath.txt. Idempotent.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${FLINK_VENV:-$ROOT/.venv-flink}"
OUT="$ROOT/bench/.build/flink"
[ -x "$VENV/bin/python" ] || bash "$ROOT/tests/flink/build.sh"  # creates .venv-flink (needs UV)
LIB="$("$VENV/bin/python" -c 'import os, pyflink; print(os.path.join(os.path.dirname(pyflink.__file__), "lib"))')"
CP="$(ls "$LIB"/*.jar | sort | tr '\n' ':')"
mkdir -p "$OUT"
if [ ! -f "$OUT/.built" ] || [ "$(cat "$OUT/.built")" != "$CP" ] || [ -n "$(find "$ROOT/bench/flink/src" -name '*.java' -newer "$OUT/.built" | head -n1)" ]; then
  echo "bench/flink/build.sh: compiling into $OUT/classes" >&2
  rm -rf "$OUT/classes"; mkdir -p "$OUT/classes"
  javac -nowarn -encoding UTF-8 -source 17 -target 17 -cp "$CP" -d "$OUT/classes" "$ROOT"/bench/flink/src/*.java
  printf '%s' "$CP" > "$OUT/.built"
fi
printf '%s%s\n' "$OUT/classes:" "$CP" > "$OUT/classpath.txt"
