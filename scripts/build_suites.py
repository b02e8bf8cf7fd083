"""Rewrite the saved expectation suites, expectations/suites/replay_*.json, from `build_suites()` in
src/event_replay/quality/suites.py, after changing a suite there (tests/quality/test_suites.py fails while they
differ). A developer's step: nothing in a run or a DAG calls it.

    .venv/bin/python scripts/build_suites.py
"""
from __future__ import annotations

from event_replay.quality.suites import save_suites


def main() -> None:
    for path in save_suites():
        print(path)


if __name__ == "__main__":
    main()
