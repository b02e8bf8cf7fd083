"""The live output's description (compare/live_spec.py): the column mapping and reader options parsed, unknown
roles and formats refused before anything is read, the aggregates compared."""
from __future__ import annotations

import pytest

from compare_frames import cfg
from event_replay.compare.live_spec import CompareInputError, LiveSpec, parse_mapping, parse_options


def test_mapping_parse():
    assert parse_mapping("key=user, window_start=ws,cnt=n", "--live-columns") == \
        {"key": "user", "window_start": "ws", "cnt": "n"}
    with pytest.raises(CompareInputError, match="twice"):
        parse_mapping(["key=a", "key=b"], "--live-columns")
    with pytest.raises(CompareInputError, match="ROLE=COLUMN"):
        parse_mapping("key", "--live-columns")
    with pytest.raises(CompareInputError, match="unknown role 'cnnt'"):
        LiveSpec(path="x", columns={"cnnt": "n"}).check(cfg())


def test_reader_options_and_escapes():
    assert parse_options(["sep=\\t", "header=false", "nullValue=", " quote ='"]) == \
        {"sep": "\t", "header": "false", "nullValue": "", "quote": "'"}
    assert parse_options(None) == {}
    for bad in ("sep", "=x"):
        with pytest.raises(CompareInputError) as e:
            parse_options([bad])
        assert e.value.what == "--live-option"


def test_mapping_skips_blank_items_and_names_the_option():
    assert parse_mapping(["key=a,", " , cnt = n"], "--live-columns") == {"key": "a", "cnt": "n"}
    assert parse_mapping(None, "--live-columns") == {} and parse_mapping("", "--live-columns") == {}
    for bad in ("key=", "=a"):
        with pytest.raises(CompareInputError) as e:
            parse_mapping(bad, "--live-late-columns")
        assert e.value.what == "--live-late-columns" and str(e.value).startswith("bad input: --live-late-columns: ")


def test_spec_checks_before_reading(tmp_path):
    LiveSpec(path="x", format="csv", columns={"key": "k", "fire_time": "t", "partition": "day", "total": "s"},
             late_columns={"split": "p", "arrival_time": "a"}).check(cfg())
    for spec, what in [(LiveSpec(path="x", format="avro"), "--live-format"),
                       (LiveSpec(path="x", late_columns={"window_start": "w"}), "--live-late-columns"),
                       (LiveSpec(path="x", columns={"late_key": "k"}), "--live-columns")]:
        with pytest.raises(CompareInputError) as e:
            spec.check(cfg())
        assert e.value.what == what
    LiveSpec(path=str(tmp_path), late_path="s3a://bucket/late").check_paths()  # remote: not checked here
    with pytest.raises(CompareInputError) as e:
        LiveSpec(path=str(tmp_path), late_path=str(tmp_path / "late")).check_paths()
    assert e.value.what == "--live-late"


def test_the_aggregates_compared():
    assert LiveSpec(path="x").compared_aggregates(cfg()) == ["cnt", "total"]  # none mapped: every one
    assert LiveSpec(path="x", columns={"key": "k", "total": "s"}).compared_aggregates(cfg()) == ["total"]
