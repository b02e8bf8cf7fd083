"""The compare page and the why-report's "versus live" section (compare/page.py), from the summary dict alone: the
verdict first (agrees, or how many windows and late rows differ), the glance line, each partition against the
threshold, the differences in words, every value from the summary escaped. (tests/why/test_page.py is the
why-report's page.)"""
from __future__ import annotations

from html.parser import HTMLParser

from event_replay.compare.page import glance, render, verdict, versus_live_section

TOTALS = {"windows": 1200, "agreeing": 1198, "differing": 2, "equal": 1198, "duplicate": 0, "value_differs": 1,
          "replay_only": 1, "live_only": 0, "agreement_pct": 99.8333}


def summary(**kw):
    s = {"output_path": "/out", "scope": "2024-01-01", "live": {"path": "/live/<sink>", "format": "json", "rows": 9},
         "mode": "last firing", "totals": TOTALS, "min_agreement_pct": 99.9,
         "partitions": [{"partition": "2024-01-01", "windows": 1200, "agreement_pct": 99.8333}],
         "rules": [{"aggregate": "cnt", "text": "cnt: exact"}],
         "differences_sample": [{"partition": "2024-01-01", "key": "<k>", "window_start": "2024-01-01 00:00:00",
                                 "window_end": "2024-01-01 00:00:10", "class": "value_differs",
                                 "differing": "cnt,firings", "replay_firings": 2, "live_versions": 1,
                                 "replay_cnt": 3, "live_cnt": 4.0, "explanation": "a late row & more"}],
         "late_sample": None, "hints": [{"text": "idle timeout <5s>"}], "files": {"differences": "differences.csv"}}
    return {**s, **kw}


def test_the_verdict_says_agrees_or_what_differs():
    agrees = {"totals": {**TOTALS, "differing": 0, "duplicate": 3, "agreement_pct": 100.0}}
    assert "agrees with the live output (3 windows duplicated in the live output)." in verdict(agrees)
    assert "class='verdict ok'" in verdict(agrees)
    v = verdict(summary())
    assert "class='verdict bad'" in v and "2 of 1,200 windows (agreement 99.83%)" in v
    only_late = verdict({"totals": {**TOTALS, "differing": 0, "late_replay_only": 1, "late_live_only": 0}})
    assert "differs from the live output: 1 late row (" in only_late
    both = verdict({"totals": {**TOTALS, "late_replay_only": 2, "late_live_only": 1}})
    assert "2 of 1,200 windows and 3 late rows" in both


def test_a_share_just_short_of_100_is_not_shown_as_100():
    from event_replay.compare.classify import totals

    t = totals([{"partition": "2024-01-01", "windows": 10_000_000, "equal": 9_999_999, "duplicate": 0,
                 "value_differs": 1, "replay_only": 0, "live_only": 0, "differing": 1, "agreeing": 9_999_999}])
    assert t["agreement_pct"] < 100  # the figure itself: not rounded onto 100
    s = summary(totals={**TOTALS, **t}, partitions=[{"partition": "2024-01-01", "windows": 10_000_000,
                                                     "agreement_pct": t["agreement_pct"]}], min_agreement_pct=100.0)
    page = render(s)
    assert "99.99999%" in verdict(s) and "100.00%" not in page and "(99.99999%)" in glance(s)
    assert "below (&gt;= 100%)" in page  # the partition is below a 100 % threshold, and says so


def test_the_glance_line():
    g = glance(summary(scope="<all>"))
    assert g == ("1,200 windows compared (&lt;all&gt;): 1,198 agree (99.83%), 2 differ (value 1, replay only 1, "
                 "live only 0).")
    late = glance({"totals": {**TOTALS, "duplicate": 4, "late_matched": 5, "late_replay_only": 1,
                              "late_live_only": 0}, "scope": "x"})
    assert late.endswith("; 4 windows are duplicated in the live output; late rows: 5 matched, 1 late in the "
                         "replay only, 0 in live only.")


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.text = []

    def handle_data(self, data):
        self.text.append(data)


def test_the_page_escapes_what_the_summary_holds_and_marks_partitions_below_the_threshold():
    page = render(summary())
    parsed = _Text()
    parsed.feed(page)
    text = "".join(parsed.text)
    assert "<k>" not in page and "<sink>" not in page
    for raw in ("/live/<sink>", "<k>", "idle timeout <5s>", "a late row & more"):
        assert raw in text and raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in page
    assert "below (>= 99.90%)" in text  # 99.83 % is under the 99.9 % threshold
    assert "cnt, number of firings (replay 2, live 1)" in text
    assert "3 / 4" in text  # the values of each side
    assert "Not compared: no live late output" in text
    assert "ok (&gt;= 99.00%)" in render(summary(min_agreement_pct=99.0))


def test_the_versus_live_section():
    assert versus_live_section(None) == "" and versus_live_section({}) == ""
    section = versus_live_section({**summary(), "page": "../compare/index.html", "calibrations": []}, base="run/")
    assert "id='versus-live'" in section and "href='run/../compare/index.html'" in section
    assert "id='versus-live-partitions'" in section and "2 of 1,200 windows" in section
    cal = {"verdict": "idle timeout 30s agrees best", "ranking": [
        {"live_rank": 2, "variant": "b", "live_score": 0.5, "live_agreement_pct": 50.0},
        {"live_rank": 1, "variant": "a", "live_score": 1.0, "live_agreement_pct": 100.0,
         "live_firings_matched": 10, "live_firings": 10, "live_late_matched": 64, "live_late": 64,
         "live_late_union": 65}]}
    only_cal = versus_live_section({"calibrations": [cal], "config": {"watermark": "1s", "idle timeout": "5s"}})
    assert "idle timeout 30s agrees best" in only_cal and "ran with 1s, idle timeout 5s" in only_cal
    assert only_cal.index("<td>a</td>") < only_cal.index("<td>b</td>")  # best first
    assert "64 of 64" in only_cal and "id='versus-live-partitions'" not in only_cal  # of the live job's late rows


def test_a_window_fired_a_different_number_of_times_is_not_said_to_differ_in_value():
    """Count and sum agree, only the number of firings differs: the class says so, not "value differs"."""
    row = {**summary()["differences_sample"][0], "differing": "firings", "live_cnt": 3}
    page = render(summary(differences_sample=[row]))
    assert "<td class='bad'>fired a different number of times</td><td>number of firings (replay 2, live 1)</td>" \
        in page, page
    assert "<td class='bad'>value differs</td><td>cnt, number of firings" in render(summary())


def test_the_page_and_the_versus_live_section_show_the_same_diagnosis_first(tmp_path):
    """summary.json -> the compare page, and -> why/versus_live's entry -> the why-report's section: the same hints
    in the same order (the search's full agreement, then the cause with its evidence) and the search's ranking."""
    import json

    from event_replay.why.versus_live import versus_live

    hints = [{"kind": "search", "confidence": "confirmed", "text": "With idle timeout 6.0 s the replay agrees on 100%"},
             {"kind": "cause", "confidence": "high", "text": "The idle timeout differs. Evidence: 12 of 90 windows"},
             {"kind": "timing", "text": "3 windows agree in value"}]
    search = [{"live_rank": 1, "change": "idle timeout 6.0 s", "live_agreement_pct": 100.0, "live_late_matched": 4,
               "live_late_union": 4},
              {"live_rank": 2, "change": "idle timeout 2.0 s", "live_agreement_pct": 97.5, "live_late_matched": 3,
               "live_late_union": 5}]
    (tmp_path / "compare").mkdir()
    (tmp_path / "compare" / "summary.json").write_text(json.dumps(summary(hints=hints, search=search)))
    entry = versus_live(tmp_path / "why_report", str(tmp_path / "no-outputs"))
    for page in (render(summary(hints=hints, search=search)), versus_live_section(entry)):
        at = [page.index(h["text"]) for h in hints]
        assert at == sorted(at), page
        assert page.index("idle timeout 6.0 s</td>") < page.index("idle timeout 2.0 s</td>")
        assert "97.50%" in page and "3 of 5" in page


def test_the_replay_s_rows_are_accounted_with_the_filtered_ones():
    """rows read = in windows + late + quarantined + skipped + filtered (issue 50), under "How it was compared"."""
    rows = {"rows_read": 1010, "rows_in_windows": 900, "late_rows": 7, "quarantined_rows": 2, "skipped_rows": 1,
            "filtered_rows": 100}
    page = render(summary(rows=rows, config={"row filter": "status = '403'"}))
    assert ("Replay rows read 1,010 = 900 in windows + 7 late + 2 quarantined + 1 skipped + 100 filtered."
            in page)
    assert "row filter status = &#x27;403&#x27;" in page
    assert "Replay rows read" not in render(summary())
