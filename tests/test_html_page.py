"""The project's one HTML table (html_page.table) and its cell text."""
from __future__ import annotations

from event_replay.html_page import STYLE, THEME_SCRIPT, cell, table


def test_cell_text():
    assert [cell(v) for v in (None, True, False, 1234567, 0.5, "<b>&")] == \
        ["&ndash;", "yes", "no", "1,234,567", "0.5", "&lt;b&gt;&amp;"]


def test_table_numbers_right_aligned_values_escaped_and_a_total_row():
    rows = [{"split": "s<1>", "rows": 1200, "late": False}, {"split": "s2", "rows": None}]
    got = table(rows, [("split", "split & co"), ("rows", "rows"), ("late", "late")], "t",
                total={"split": "total", "rows": 1200})
    assert got == ("<table id='t'><thead><tr><th>split &amp; co</th><th>rows</th><th>late</th></tr></thead><tbody>"
                   "<tr><td>s&lt;1&gt;</td><td class='n'>1,200</td><td>no</td></tr>"
                   "<tr><td>s2</td><td>&ndash;</td><td>&ndash;</td></tr>"
                   "<tr class='total'><td>total</td><td class='n'>1,200</td><td>&ndash;</td></tr></tbody></table>")


def test_table_with_its_own_cell_text_and_row_class():
    rows = [{"variant": "a<b", "share": 0.0125}]
    got = table(rows, [("variant", "variant"), ("share", "late share")], "tuning-0",
                text=lambda col, v: f"{v:.2%}" if col == "share" else str(v), row_class="variant")
    assert got == ("<table id='tuning-0'><thead><tr><th>variant</th><th>late share</th></tr></thead><tbody>"
                   "<tr class='variant'><td>a&lt;b</td><td class='n'>1.25%</td></tr></tbody></table>")


def test_the_page_look_follows_the_airflow_theme():
    assert "prefers-color-scheme:dark" in STYLE and "td.n" in STYLE
    assert THEME_SCRIPT.startswith("<script>") and "localStorage.getItem('theme')" in THEME_SCRIPT
