"""The corpus of Flink SQL scripts in the shapes found in public Flink SQL (tests/from_flink/flink_sql_corpus/scripts):
each script's expected config (NN_name.yaml, byte for byte, comments included) or refusal (NN_name.refused, the one
line `replay config from-flink-sql` prints). A first line `-- args: --query-window 2` / `-- args: --table t` gives the
command's options. REPLAY_REGENERATE_CORPUS=1 rewrites the expectations (review the diff before committing)."""
from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from event_replay.from_flink.settings import FlinkSettingsError
from event_replay.from_flink.sql import config_from_flink_sql

SCRIPTS = Path(__file__).parent / "flink_sql_corpus" / "scripts"
FILES = sorted(SCRIPTS.glob("*.sql"))
REGENERATE = os.environ.get("REPLAY_REGENERATE_CORPUS") == "1"


def _options(script: Path) -> dict:
    first = script.read_text().splitlines()[0]
    if not first.startswith("-- args:"):
        return {}
    words, out = shlex.split(first.removeprefix("-- args:")), {}
    for flag, value in zip(words[::2], words[1::2]):
        out[{"--query-window": "query_window", "--table": "table"}[flag]] = \
            int(value) if flag == "--query-window" else value
    return out


def _outcome(script: Path) -> tuple[str, str]:
    try:
        text, _ = config_from_flink_sql(script, source_path="log", output_path="out", **_options(script))
        return ".yaml", text
    except FlinkSettingsError as e:
        return ".refused", f"{e}\n"


def test_the_corpus_is_large_and_mixed():
    assert len(FILES) >= 30
    kinds = [next(s for s in (".yaml", ".refused") if f.with_suffix(s).exists()) for f in FILES]
    assert kinds.count(".yaml") >= 15 and kinds.count(".refused") >= 15


@pytest.mark.parametrize("script", FILES, ids=[f.stem for f in FILES])
def test_corpus_script(script: Path):
    suffix, got = _outcome(script)
    if REGENERATE:
        for s in (".yaml", ".refused"):
            script.with_suffix(s).unlink(missing_ok=True)
        script.with_suffix(suffix).write_text(got)
    expected = [script.with_suffix(s) for s in (".yaml", ".refused") if script.with_suffix(s).exists()]
    assert len(expected) == 1, f"{script.name}: one expectation, .yaml or .refused"
    assert expected[0].suffix == suffix, f"{script.name}: expected {expected[0].suffix}, got {suffix}:\n{got}"
    assert got == expected[0].read_text()
    if suffix == ".refused":
        assert got.count("\n") == 1 and got.startswith("line "), got  # one line, the line number first
        assert "sqlglot" not in got.lower() and "Expecting" not in got, got  # no parser noise
