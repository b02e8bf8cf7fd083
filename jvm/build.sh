#!/usr/bin/env bash
# Builds the engine's small Spark extension (jvm/src: the offset pre-check's read-order pass, io/read_order.py; the
# session windows' walk, engine/windows/sessions.py; the driver tables' lookups without a join, engine/lookups.py)
# into src/event_replay/jvm/event-replay-spark.jar, compiled against the jars of the installed pyspark; idempotent
# and cheap when nothing changed. Without a JDK (javac) nothing is built: replays then sort every split to check
# offsets and join the driver's tables by broadcast (same results, slower, more Spark jobs) and refuse session
# windows.
# Usage: jvm/build.sh PYTHON   (the venv's python, which has pyspark)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:?usage: jvm/build.sh PYTHON}"
SRC="$ROOT/jvm/src"
JAR="$ROOT/src/event_replay/jvm/event-replay-spark.jar"

if ! command -v javac >/dev/null 2>&1; then
  echo "install: javac not found (a JDK 17, not only a JRE): the engine's Spark extension is not built: replays sort every split to check offsets (same results, slower) and refuse session windows" >&2
  rm -f "$JAR"
  exit 0
fi
LIB="$("$PY" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
CP="$(ls "$LIB"/*.jar | sort | tr '\n' ':')"
# What the jar was built from: the classpath and the list of sources (a deleted or renamed source must not leave
# its classes in the jar); an edited source is newer than the jar.
BUILT_FROM="$CP $(cd "$SRC" && find . -name '*.java' | sort | tr '\n' ' ')"
STAMP="$ROOT/build/jvm/.built"
if [ -f "$JAR" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$BUILT_FROM" ] && \
   [ -z "$(find "$SRC" -name '*.java' -newer "$JAR" | head -n1)" ]; then
  exit 0
fi
CLASSES="$ROOT/build/jvm/classes"
rm -rf "$CLASSES"; mkdir -p "$CLASSES" "$(dirname "$JAR")"
javac -nowarn -encoding UTF-8 --release 17 -cp "$CP" -d "$CLASSES" $(find "$SRC" -name '*.java' | sort)
jar --create --file "$JAR.tmp" -C "$CLASSES" .
mv "$JAR.tmp" "$JAR"
printf '%s' "$BUILT_FROM" > "$STAMP"
echo "install: built $JAR" >&2
