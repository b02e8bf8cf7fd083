"""semantics/aggregations_config.py: output column names and aggregate expressions, each refusal naming its key."""
from __future__ import annotations

from config_cases import each_error_names_its_key

# (changes to the base config, the key the error must name)
BAD = [
    ({"aggregations": {}}, "aggregations"),
    ({"aggregations": ["count(*)"]}, "aggregations"),
    ({"aggregations": {"1cnt": "count(*)"}}, "aggregations.1cnt"),
    ({"aggregations": {"key": "count(*)"}}, "aggregations.key"),
    ({"aggregations": {"fire_index": "count(*)"}}, "aggregations.fire_index"),
    ({"aggregations": {"cnt": ""}}, "aggregations.cnt"),
    ({"aggregations": {"cnt": 3}}, "aggregations.cnt"),
    ({"aggregations": {"cnt": "sum(value"}}, "aggregations.cnt"),
    ({"aggregations": {"cnt": "sum(value) +"}}, "aggregations.cnt"),
    ({"aggregations": {"cnt": "sum(value))("}}, "aggregations.cnt"),
    ({"aggregations": {"cnt": "value"}}, "aggregations.cnt"),
]


test_each_error_names_its_key = each_error_names_its_key(BAD)
