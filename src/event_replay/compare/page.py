"""The compare page (compare/index.html), rendered from compare/summary.json alone, and the "versus live" section
the why-report shows (the same figures and hints, the settings that differ first, shorter). Styled like the why-report (html_page.py)."""
from __future__ import annotations

import html
from typing import Any, Iterable

from ..html_page import STYLE, THEME_SCRIPT, table
from .summary import diagnosis, late_matched_text, pct

CLASS_TITLES = {"equal": "equal", "duplicate": "duplicate (equal, repeated in the live output)",
                "value_differs": "value differs", "replay_only": "in the replay only", "live_only": "in live only"}
PARTITION_COLUMNS = [("partition", "partition"), ("windows", "windows compared"), ("equal", "equal"),
                     ("duplicate", "duplicates"), ("value_differs", "value differs"),
                     ("replay_only", "replay only"), ("live_only", "live only"), ("agreement", "agreement"),
                     ("verdict", "vs threshold")]
LATE_COLUMNS = [("late_matched", "late rows matched"), ("late_replay_only", "late in replay only"),
                ("late_live_only", "late in live only")]
EXTRA_STYLE = ("td.bad,span.bad{color:var(--bad);font-weight:600}td.ok,span.ok{color:var(--ok);font-weight:600}"
               "td.expl{max-width:60em;font-size:92%}ul.hints li{margin:.35em 0}"
               "#partitions td,#differences td:nth-child(-n+3),#late-rows td{white-space:nowrap}"
               ".verdict{font-size:1.2em;font-weight:600;margin:.6em 0 .2em}.verdict.bad{color:var(--bad)}"
               ".verdict.ok{color:var(--ok)}")


def glance(s: dict[str, Any]) -> str:
    t = s.get("totals") or {}
    n = t.get("windows", 0)
    text = (f"{n:,} windows compared ({html.escape(str(s.get('scope', '')))}): {t.get('agreeing', 0):,} agree "
            f"({pct(t.get('agreement_pct'))}), {t.get('differing', 0):,} differ (value {t.get('value_differs', 0):,}, "
            f"replay only {t.get('replay_only', 0):,}, live only {t.get('live_only', 0):,})")
    if t.get("duplicate"):
        text += f"; {t['duplicate']:,} windows are duplicated in the live output"
    if "late_matched" in t:
        text += (f"; late rows: {t['late_matched']:,} matched, {t['late_replay_only']:,} late in the replay only, "
                 f"{t['late_live_only']:,} in live only")
    return text + "."


def verdict(s: dict[str, Any]) -> str:
    """The answer first, in a few words: agrees, or how many windows and late rows differ."""
    t = s.get("totals") or {}
    late = (t.get("late_replay_only") or 0) + (t.get("late_live_only") or 0)
    if not t.get("differing") and not late:
        dup = f" ({t['duplicate']:,} windows duplicated in the live output)" if t.get("duplicate") else ""
        return f"<p class='verdict ok' id='verdict'>The replay agrees with the live output{dup}.</p>"
    parts = [f"{t.get('differing', 0):,} of {t.get('windows', 0):,} windows"] if t.get("differing") else []
    parts += [f"{late:,} late row{'s' if late != 1 else ''}"] if late else []
    return (f"<p class='verdict bad' id='verdict'>The replay differs from the live output: {' and '.join(parts)} "
            f"(agreement {pct(t.get('agreement_pct'))}). Each difference is explained below.</p>")


def _partition_rows(s: dict[str, Any]) -> tuple[list[dict], dict, list[tuple[str, str]]]:
    threshold = s.get("min_agreement_pct", 100.0)
    rows = []
    for r in s.get("partitions") or []:
        ok = (r.get("agreement_pct") or 0) >= threshold
        rows.append({**r, "agreement": pct(r.get("agreement_pct")),
                     "verdict": f"{'ok' if ok else 'below'} (>= {pct(threshold)})"})
    t = s.get("totals") or {}
    total = {**t, "partition": "total", "agreement": pct(t.get("agreement_pct")), "verdict": ""}
    cols = PARTITION_COLUMNS + (LATE_COLUMNS if "late_matched" in t else [])
    return rows, total, cols


def diagnosis_block(found: dict[str, Any] | None, block_id: str = "diagnosis") -> str:
    """The diagnosis (compare.summary.diagnosis, the same on every view): its headline, then the hint in full."""
    if not found:
        return ""
    level = f" ({found['confidence']})" if found.get("confidence") else ""
    return (f"<p class='glance' id='{block_id}'><b>Diagnosis: {html.escape(found['headline'])}</b>"
            f"{html.escape(level)}. <span class='muted'>{html.escape(found['text'])}</span></p>")


def _hints(s: dict[str, Any]) -> str:
    hints = s.get("hints") or []
    if not hints:
        t = s.get("totals") or {}
        if t.get("differing") or t.get("late_replay_only") or t.get("late_live_only"):
            return "<p>No pattern across the differences; each window's explanation is in the table below.</p>"
        return "<p class='ok'>Nothing to explain: the replay agrees with the live output.</p>"
    return "<ul class='hints' id='hints'>" + "".join(f"<li>{html.escape(h['text'])}</li>" for h in hints) + "</ul>"


def search_table(s: dict[str, Any], table_id: str = "settings-search") -> str:
    """The settings search's ranking (summary.json's `search`): each setting changed alone, best first."""
    rows = [{"rank": r.get("live_rank"), "change": r.get("change"), "agreement": pct(r.get("live_agreement_pct")),
             "late": (f"{r.get('live_late_matched')} of {r.get('live_late_union')}"
                      if r.get("live_late_union") is not None else "-")} for r in s.get("search") or []]
    if not rows:
        return ""
    cols = [("rank", "rank"), ("change", "the replay's config with"), ("agreement", "windows agreeing"),
            ("late", "late rows matched")]
    return "<p class='muted'>Settings search, one setting at a time:</p>" + table(rows, cols, table_id)


def _differences(s: dict[str, Any]) -> str:
    sample = s.get("differences_sample") or []
    if not sample:
        return "<p>No window differs.</p>"
    aggs = [r["aggregate"] for r in s.get("rules") or []]
    head = ["partition", "key", "window", "class", "differs in"] + [f"{a} replay / live" for a in aggs] + [
        "explanation"]
    body = []
    for r in sample:
        vals = "".join(f"<td class='n'>{html.escape(_v(r.get(f'replay_{a}')))} / "
                       f"{html.escape(_v(r.get(f'live_{a}')))}</td>" for a in aggs)
        cls = r.get("class") or ""
        body.append(f"<tr><td>{html.escape(str(r.get('partition')))}</td><td>{html.escape(str(r.get('key')))}</td>"
                    f"<td>{html.escape(str(r.get('window_start')))} &ndash; "
                    f"{html.escape(str(r.get('window_end'))[11:])}"
                    f"</td><td class='{'bad' if cls in ('value_differs', 'replay_only', 'live_only') else ''}'>"
                    f"{html.escape(_class_title(r))}</td>"
                    f"<td>{html.escape(_differs_in(r))}</td>"
                    f"{vals}<td class='expl'>{html.escape(r.get('explanation') or '')}</td></tr>")
    return (f"<table id='differences'><thead><tr>{''.join(f'<th>{html.escape(h)}</th>' for h in head)}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def _class_title(r: dict[str, Any]) -> str:
    """The window's class in words; a window whose values agree but that one side fired more often is not said to
    differ in value."""
    cls = r.get("class") or ""
    if cls == "value_differs" and (r.get("differing") or "").split(",") == ["firings"]:
        return "fired a different number of times"
    return CLASS_TITLES.get(cls, cls)


def _differs_in(r: dict[str, Any]) -> str:
    """What differs, in words: the aggregates, and how often each side fired the window (its values may agree)."""
    if not r.get("differing"):
        return "fired at another watermark" if r.get("timing") == "other_watermark" else (r.get("timing") or "")
    parts = [p for p in r["differing"].split(",") if p != "firings"]
    if "firings" in r["differing"].split(","):
        parts.append(f"number of firings (replay {r.get('replay_firings')}, live {r.get('live_versions')})")
    return ", ".join(parts)


def _v(v: Any) -> str:
    return "-" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))


def _late(s: dict[str, Any]) -> str:
    sample = s.get("late_sample")
    if sample is None:
        return ("<p class='muted'>Not compared: no live late output (<code>--live-late</code>). The explanations use "
                "the replay's own late rows.</p>")
    if not sample:
        return "<p>Every late row is late on both sides.</p>"
    cols = [("partition", "partition"), ("class", "class"), ("key", "key"), ("split", "split"), ("offset", "offset"),
            ("time", "time"), ("arrival", "arrival"), ("replay_late_watermark", "replay's watermark then")]
    return table(sample, cols, "late-rows")


def _how(s: dict[str, Any]) -> str:
    live = s.get("live") or {}
    cols = ", ".join(f"{k}={v}" for k, v in (live.get("columns") or {}).items()) or "(the replay's own names)"
    rules = "".join(f"<li>{html.escape(r['text'])}</li>" for r in s.get("rules") or [])
    skipped = s.get("not_compared") or []
    cfg = ", ".join(f"{k} {v}" for k, v in (s.get("config") or {}).items())
    return (f"<ul><li>Live output <code>{html.escape(str(live.get('path')))}</code> "
            f"({html.escape(str(live.get('format')))}, "
            f"{live.get('rows', 0):,} rows), columns {html.escape(cols)}"
            + (f"; late side output <code>{html.escape(str(live.get('late_path')))}</code>, rows matched by "
               f"{html.escape(str(live.get('late_identity')))}" if live.get("late_path") else "")
            + f".</li><li>Matching: {html.escape(str(s.get('mode')))}.</li>"
            + f"<li>Replay outputs <code>{html.escape(str(s.get('output_path')))}</code>: {html.escape(cfg)}.</li>"
            + _rows_read(s.get("rows"))
            + (f"<li>Not compared (not in the live output's mapping): {html.escape(', '.join(skipped))}.</li>"
               if skipped else "")
            + f"</ul><p>Exactness per aggregate:</p><ul>{rules}</ul>")


def _rows_read(rows: dict[str, int] | None) -> str:
    """Every row the replay read, counted once: in windows + late + quarantined + skipped + filtered."""
    if not rows:
        return ""
    return (f"<li>Replay rows read {rows['rows_read']:,} = {rows['rows_in_windows']:,} in windows + "
            f"{rows['late_rows']:,} late + {rows['quarantined_rows']:,} quarantined + {rows['skipped_rows']:,} "
            f"skipped + {rows['filtered_rows']:,} filtered.</li>")


def render(s: dict[str, Any], nav: str = "", base: str = "") -> str:
    rows, total, cols = _partition_rows(s)
    files = s.get("files") or {}
    links = " ".join(f"<a href='{base}{html.escape(v)}'>{html.escape(v)}</a>" for v in files.values())
    return f"""<!doctype html><html><head><meta charset="utf-8"><meta name="color-scheme" content="light dark">
<title>Replay vs live: {html.escape(str(s.get('output_path', '')))}</title>
<style>{STYLE}{EXTRA_STYLE}</style>{THEME_SCRIPT}</head>
<body><nav>{nav}</nav><h1>Does the replay match production?</h1>
<p class='muted'>Replay <code>{html.escape(str(s.get('output_path', '')))}</code> against the live job's output
<code>{html.escape(str((s.get('live') or {}).get('path', '')))}</code>.</p>
{verdict(s)}<p class='glance' id='glance'>{glance(s)}</p>{diagnosis_block(diagnosis(s))}
<h2 id='suggests'>What the differences suggest</h2>{_hints(s)}{search_table(s)}
<h2 id='partitions'>Per partition</h2>{table(rows, cols, 'partitions', total=total)}
<h2 id='windows'>Differences, explained</h2>
<p class='muted'>The first {len(s.get('differences_sample') or [])} windows that differ, are duplicated or fired at
another watermark; every one, with its evidence, in
<a href='{base}{html.escape(files.get('differences', 'differences.csv'))}'>differences.csv</a>.</p>
{_differences(s)}
<h2 id='late'>Late rows on one side only</h2>{_late(s)}
<h2 id='how'>How it was compared</h2>{_how(s)}
<p class='muted'>Files: {links} <a href='{base}summary.json'>summary.json</a>.</p></body></html>
"""


def calibration_section(cals: list[dict[str, Any]], replayed: dict[str, str] | None = None, shown: int = 6) -> str:
    """What `replay tune --against-live` found: per grid, the verdict and the ranking (best first), next to the
    settings the replay ran with (`replayed`: the comparison's config line)."""
    parts = []
    cols = [("live_rank", "rank"), ("variant", "variant"), ("score", "agreement score"),
            ("agreement", "windows agreeing"), ("firings", "live firings matched"), ("late", "live late rows matched")]
    for i, c in enumerate(cals):
        rows = []
        for r in sorted(c.get("ranking") or [], key=lambda r: r.get("live_rank") or 0)[:shown]:
            rows.append({"live_rank": r.get("live_rank"), "variant": r.get("variant"),
                         "score": pct(100 * (r.get("live_score") or 0)), "agreement": pct(r.get("live_agreement_pct")),
                         "firings": f"{r.get('live_firings_matched')} of {r.get('live_firings')}",
                         "late": late_matched_text(r)})
        parts.append(f"<p class='glance' id='calibration-verdict-{i}'>{html.escape(str(c.get('verdict')))}</p>"
                     + table(rows, cols, f"calibration-{i}"))
    if not parts:
        return ""
    ran = (f" The replay ran with {html.escape(replayed.get('watermark', ''))}, idle timeout "
           f"{html.escape(replayed.get('idle timeout', ''))}." if replayed else "")
    return ("<h3 id='calibration'>What calibration finds</h3><p>The what-if grid ranked by agreement with the live "
            "output (<code>replay tune --against-live</code>): the settings the live job most likely ran with."
            f"{ran}</p>"
            + "".join(parts))


def versus_live_section(entry: dict[str, Any] | None, base: str = "") -> str:
    """The why-report's "versus live" section (why/versus_live.py: the comparison next to the report and
    the calibrations of the outputs); empty without either."""
    if not entry:
        return ""
    out = (f"<style>{EXTRA_STYLE}#versus-live-partitions td,[id^=calibration-] td{{white-space:nowrap}}"
           "</style><h2 id='versus-live'>Versus live</h2>")
    if entry.get("totals"):
        rows, total, cols = _partition_rows(entry)
        link = (f" The whole comparison, every window explained: <a id='compare-page' "
                f"href='{html.escape(base + entry['page'])}'>compare page</a>." if entry.get("page") else "")
        hints = entry.get("hints") or []
        items: Iterable[str] = (f"<li>{html.escape(h['text'])}</li>" for h in hints[:6])
        out += (f"<p>The replay against the live job's output <code>"
                f"{html.escape(str((entry.get('live') or {}).get('path', '')))}</code> (<code>replay compare</code>)."
                f"{link}</p>{verdict(entry)}<p class='glance' id='versus-live-glance'>{glance(entry)}</p>"
                + diagnosis_block(diagnosis(entry), "versus-live-diagnosis")
                + (f"<ul class='hints'>{''.join(items)}</ul>" if hints else "")
                + search_table(entry, "versus-live-search")
                + table(rows, cols, "versus-live-partitions", total=total))
    return out + calibration_section(entry.get("calibrations") or [], entry.get("config"))
