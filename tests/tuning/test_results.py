"""Reading tuning results back (tuning/results.py): every `<output>/_tuning/<grid>/tuning.json` by folder name, in
name order; a staging folder (hidden) or an unreadable file is no result; no `_tuning/` is no result."""
from __future__ import annotations

import json

from event_replay.layout import TUNING_FOLDER, TUNING_JSON_FILE
from event_replay.tuning.results import read_results


def write(root, folder, content):
    (root / TUNING_FOLDER / folder).mkdir(parents=True)
    (root / TUNING_FOLDER / folder / TUNING_JSON_FILE).write_text(content)


def test_every_grid_by_folder_name(tmp_path):
    write(tmp_path, "delay_5s", json.dumps({"rows": [{"variant": "b"}]}))
    write(tmp_path, "delay_1s", json.dumps({"rows": [{"variant": "a"}], "folder": "ignored"}))
    results = read_results(tmp_path)
    assert [r["folder"] for r in results] == ["delay_1s", "delay_5s"]  # the folder, not what the file says
    assert results[0]["rows"] == [{"variant": "a"}]
    assert read_results(str(tmp_path)) == results


def test_staging_folders_and_unreadable_files_are_no_results(tmp_path):
    write(tmp_path, ".delay_1s.staging-1234abcd", json.dumps({"rows": []}))  # local_folder.replace_folder's
    write(tmp_path, "half_written", '{"rows": [')
    (tmp_path / TUNING_FOLDER / "no_json").mkdir()
    write(tmp_path, "good", json.dumps({"rows": []}))
    assert [r["folder"] for r in read_results(tmp_path)] == ["good"]


def test_no_tuning_folder_no_results(tmp_path):
    assert read_results(tmp_path) == []
    assert read_results(tmp_path / "absent") == []
