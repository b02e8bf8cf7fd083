"""semantics/output_config.py: the output section's keys, each refusal naming its key; windows_files."""
from __future__ import annotations

from config_cases import DELETE, base, each_error_names_its_key, with_
from event_replay.semantics.config import parse_config, to_raw

# (changes to the base config, the key the error must name)
BAD = [
    ({"output.path": DELETE}, "output.path"),
    ({"output.path": ""}, "output.path"),
    ({"output.format": "csv"}, "output.format"),
    ({"output.windows_files": 0}, "output.windows_files"),
    ({"output.windows_files": 4097}, "output.windows_files"),
    ({"output.windows_files": "8"}, "output.windows_files"),
    ({"output.windows_files": True}, "output.windows_files"),
]


test_each_error_names_its_key = each_error_names_its_key(BAD)


def test_windows_files_defaults_to_one_and_is_written_back_only_when_set():
    assert parse_config(base()).output.windows_files == 1 and "windows_files" not in to_raw(parse_config(base()))["output"]
    cfg = parse_config(with_({"output.windows_files": 8}))
    assert cfg.output.windows_files == 8 and to_raw(cfg)["output"]["windows_files"] == 8
