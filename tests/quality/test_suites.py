"""The saved expectation suites (quality/suites.py): the files under expectations/suites/ are the built ones and load
complete; a suite that loses an expectation (an unknown type GX drops with a log line) is refused."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration  # GX's import (as in test_expectations.py)


def test_saved_suites_are_the_built_ones_and_load_complete():
    from event_replay.quality.suites import SUITE_NAMES, build_suites, load_suites, suite_path

    built, saved = build_suites(), load_suites()
    for name in SUITE_NAMES:
        assert saved[name].expectations, name
        a, b = built[name].to_json_dict(), saved[name].to_json_dict()
        a.pop("id", None), b.pop("id", None)
        assert a == b, f"expectations/suites for {name} is stale: python scripts/build_suites.py"
        assert all(e.description for e in saved[name].expectations)
        assert json.loads(suite_path(name).read_text())["expectations"]


def test_a_suite_that_loses_an_expectation_is_refused(tmp_path):
    from event_replay.quality.suites import SuiteError, load_suite, suite_path

    raw = json.loads(suite_path("windows").read_text())
    raw["expectations"][1]["type"] = "expect_something_never_registered"
    target = suite_path("windows", tmp_path)
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(raw))
    with pytest.raises(SuiteError):
        load_suite("windows", tmp_path)
    raw["expectations"] = []
    target.write_text(json.dumps(raw))
    with pytest.raises(SuiteError):
        load_suite("windows", tmp_path)
