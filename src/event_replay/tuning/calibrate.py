"""Calibration: `replay tune --against-live PATH` ranks the what-if grid's variants by agreement with the live output,
so a team finds the settings its live job really ran with (an idle timeout someone changed in production, a
larger out-of-orderness).

Each variant's engine result is matched with the live output exactly as `replay compare` matches (matching.py,
rules.py; no explanations), and scored:
- windows: equal (duplicates count as equal) of the windows on either side; firings matched of the live firings
  (the same with a last-firing sink; every firing pair by pair with --live-keeps-updates);
- late rows (with the live late output): shown as matched of the live job's late rows (`live_late`); the score
  counts them against the late rows on either side (`live_late_union`);
- score = (windows equal + late rows matched) / (windows on either side + late rows on either side);
- tie-break: the windows whose (last) firing fired at the same watermark, when the live sink records it.
The ranking (best first) is printed, written next to the grid's result (calibration.md, calibration.json) and its
columns join the tuning table (tuning.json/csv, the why-report, the Replay runs page). Variants with the same
score at the top are reported as a tie: the grid cannot tell them apart on this output.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..compare.checkpoint import on_disk
from ..compare.classify import classify_late, classify_windows
from ..compare.live import KEYLESS_KEY, LiveOutput, read_live
from ..compare.live_spec import LiveSpec
from ..compare.matching import match_late, match_windows
from ..compare.replay_side import ReplaySide, Scope, from_engine
from ..compare.rules import rules_for
from ..engine.contract import EngineResult
from ..layout import TUNING_JSON_FILE
from ..semantics.config import JobConfig
from ..compare.summary import late_matched_text
from . import variant_key
from .keyed import VARIANT, KeyedReplay
from .table import display_value

COLUMNS = ["live_score", "live_agreement_pct", "live_windows_equal", "live_windows", "live_firings_matched",
           "live_firings", "live_late_matched", "live_late", "live_late_union", "live_watermarks_matched", "live_rank"]
FILE_MD, FILE_JSON = "calibration.md", "calibration.json"


@dataclass
class AgainstLive:
    """The live output read once (at the first variant: the aggregates' types come from the engine's result)."""
    spark: Any
    cfg: JobConfig
    spec: LiveSpec
    scope: Scope = field(default_factory=Scope)
    live: LiveOutput | None = None
    _cached: list[DataFrame] = field(default_factory=list)

    def _load(self, types) -> LiveOutput:
        if self.live is None:
            live = read_live(self.spark, self.spec, self.cfg, types)
            # On disk only: a heap-held checkpoint is unrolled as row objects (compare/checkpoint.py's reason).
            live.firings = on_disk(live.firings, eager=True)
            if live.late is not None:
                live.late = on_disk(live.late, eager=True)
            self.live = live
        return self.live

    def frames(self, results: Sequence[tuple[int, Any, JobConfig]], outputs: KeyedReplay) -> dict[str, DataFrame]:
        """The agreement of every variant (number, engine result, config) in one match, lazily: each side's key
        (and a late row's split) becomes one string of the variant and the key (variant_key.py), the live output
        is repeated once per variant, so the windows and late rows of all variants are matched and classified by
        one plan, as one variant's are. `outputs`: the same results side by side (keyed.KeyedReplay: the keyed
        pass's, or keyed.side_by_side of variants replayed one by one), read once for all variants, not once per
        variant. One row per variant (column `variant`; a variant with no row has no window or late row)."""
        ids = [i for i, _, _ in results]
        digits = variant_key.width(ids)
        side = _variants_side(outputs, ids, results[0][2], digits)
        live = self._load(side.types)
        rules = rules_for(results[0][2].aggregations, side.types, live.aggregates)
        firings, late = side.firings, side.late
        every = F.explode(F.array(*[F.lit(i) for i in ids]))
        live = LiveOutput(
            firings=_tagged(live.firings.withColumn(_EACH, every), F.col(_EACH), digits, "key").drop(_EACH),
            aggregates=live.aggregates, has=live.has, late_identity=live.late_identity,
            late=None if live.late is None else
            _tagged(live.late.withColumn(_EACH, every), F.col(_EACH), digits, "late_key", "late_split").drop(_EACH))
        by = variant_key.variant_of(F.col("key"), digits).alias("variant")
        m = match_windows(firings, live.firings, rules, live.has, self.spec.keeps_updates)
        w = classify_windows(m, live.aggregates, self.scope, self.spec.keeps_updates)
        frames = {"windows": w.groupBy(by).agg(
            F.count(F.lit(1)).alias("windows"),
            F.sum(F.col("class").isin("equal", "duplicate").cast("long")).alias("equal"),
            F.sum("firings_equal").alias("firings_matched"), F.sum("live_versions").alias("live_firings"),
            F.sum((F.col("in_replay") & F.col("in_live") & F.col("live_fire_watermark_ms").isNotNull()
                   & F.col("live_fire_watermark_ms").eqNullSafe(F.col("replay_fire_watermark_ms")))
                  .cast("long")).alias("wm"))}
        if live.late is not None:
            frames["late"] = classify_late(match_late(late, live.late, live.late_identity), self.scope).groupBy(
                by).agg(F.sum("matched").alias("m"), F.sum("replay_only").alias("ro"),
                         F.sum("live_only").alias("lo"))
        return frames

    def row(self, found: dict[str, list[dict[str, Any]]], variant: int) -> dict[str, Any]:
        """A variant's columns from frames' gathered rows."""
        empty = {"windows": {"windows": 0, "equal": 0, "firings_matched": 0, "live_firings": 0, "wm": 0},
                 "late": {"m": 0, "ro": 0, "lo": 0}}
        return self._row({k: [next((r for r in rows if r["variant"] == variant), empty[k])]
                         for k, rows in found.items()})

    def _row(self, found: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        """The agreement columns of one variant, from its gathered `frames`."""
        r = found["windows"][0]
        windows, equal = int(r["windows"] or 0), int(r["equal"] or 0)
        has_late = "late" in found
        late_matched = late_union = live_late = 0
        if has_late:
            lt = found["late"][0]
            late_matched = int(lt["m"] or 0)
            live_late = late_matched + int(lt["lo"] or 0)  # the live job's own late rows
            late_union = live_late + int(lt["ro"] or 0)
        union = windows + late_union
        assert self.live is not None  # frames() read it
        return {"live_score": round((equal + late_matched) / union, 6) if union else 1.0,
                "live_agreement_pct": round(100.0 * equal / windows, 4) if windows else 100.0,
                "live_windows_equal": equal, "live_windows": windows,
                "live_firings_matched": int(r["firings_matched"] or 0), "live_firings": int(r["live_firings"] or 0),
                "live_late_matched": late_matched if has_late else None,
                "live_late": live_late if has_late else None,
                "live_late_union": late_union if has_late else None,
                "live_watermarks_matched": int(r["wm"] or 0) if "fire_watermark" in self.live.has else None}


_EACH = "__variant"


def _variants_side(outputs: KeyedReplay, ids: Sequence[int], cfg: JobConfig, digits: int) -> ReplaySide:
    """The variants `ids` of `outputs` as one replay side (from_engine), each key and late row's split already
    tagged with its variant: from_engine keeps a string key as it is (a job without a key gets the comparison's
    KEYLESS_KEY, tagged here, so the config it reads names a key column)."""
    variant = F.col(VARIANT)
    windows, late = outputs.windows, outputs.late_events
    if set(outputs.watermarks) != set(ids):  # a keyed pass of more variants than these
        windows, late = windows.where(variant.isin(*ids)), late.where(variant.isin(*ids))
    key = F.lit(KEYLESS_KEY) if cfg.source.keyless else F.col("key").cast("string")
    windows = windows.withColumn("key", variant_key.tagged(variant, key, digits))
    late = late.withColumns({"key": variant_key.tagged(variant, key, digits),
                             "split": variant_key.tagged(variant, F.col("split").cast("string"), digits)})
    if cfg.source.keyless:
        cfg = dataclasses.replace(cfg, source=dataclasses.replace(cfg.source,
                                                                  columns={**cfg.source.columns, "key": "key"}))
    result = EngineResult(windows=windows, late_events=late, watermarks=outputs.watermarks[ids[0]])
    return from_engine(result, cfg)


def _tagged(df: DataFrame, variant: Column, digits: int, *cols: str) -> DataFrame:
    """`df` with each of `cols` (strings) made one string of the variant and the column's value: rows of different
    variants never meet."""
    return df.withColumns({c: variant_key.tagged(variant, F.col(c), digits) for c in cols})


def rank(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sets `live_rank` (1 = best; equal scores share a rank) on each row; returns the rows best first."""
    def key(r: dict[str, Any]) -> tuple:
        return (-(r.get("live_score") or 0), -(r.get("live_watermarks_matched") or 0))
    ordered = sorted(rows, key=key)
    prev, n = None, 0
    for i, r in enumerate(ordered, 1):
        if key(r) != prev:
            n, prev = i, key(r)
        r["live_rank"] = n
    return ordered


def ranking_table(rows: Sequence[dict[str, Any]]) -> str:
    cols = [("live_rank", "rank"), ("variant", "variant"), ("live_score", "score"),
            ("live_agreement_pct", "windows agreeing"), ("live_firings_matched", "firings matched"),
            ("live_late_matched", "late rows matched"), ("live_watermarks_matched", "same fire watermark")]
    head = "| " + " | ".join(h for _, h in cols) + " |"
    sep = "| " + " | ".join("---" for _ in cols) + " |"
    body = []
    for r in rows:
        cells = []
        for c, _ in cols:
            if c == "live_firings_matched":
                cells.append(f"{r.get(c)} of {r.get('live_firings')}")
            elif c == "live_late_matched":
                cells.append(late_matched_text(r))
            else:
                cells.append(display_value(c, r.get(c)))
        body.append("| " + " | ".join(cells) + " |")
    return "\n".join([head, sep, *body])


def verdict(rows: Sequence[dict[str, Any]]) -> str:
    """One sentence: the best variant, or the tie."""
    if not rows:
        return "calibration: no variant"
    best = [r for r in rows if r.get("live_rank") == 1]
    if len(best) > 1:
        return (f"calibration: {len(best)} variants agree equally with the live output "
                f"({display_value('live_score', best[0].get('live_score'))}): "
                + "; ".join(r["variant"] for r in best) + " (the grid cannot tell them apart on this output)")
    b = best[0]
    return (f"calibration: the live output agrees best with {b['variant']} "
            f"(score {display_value('live_score', b['live_score'])}, "
            f"windows agreeing {display_value('live_agreement_pct', b['live_agreement_pct'])})")


def write_ranking(folder: Path, spec: LiveSpec, rows: Sequence[dict[str, Any]]) -> None:
    """calibration.md and calibration.json next to the grid's result, and the ranking into its tuning.json."""
    ordered = rank(list(rows))  # the rows themselves get their rank (the printed table, tuning.json)
    md = f"# Calibration against {spec.path}\n\n{verdict(ordered)}\n\n{ranking_table(ordered)}\n"
    (folder / FILE_MD).write_text(md)
    doc = {"live": {"path": spec.path, "format": spec.format, "late_path": spec.late_path,
                    "keeps_updates": spec.keeps_updates}, "verdict": verdict(ordered), "ranking": ordered}
    (folder / FILE_JSON).write_text(json.dumps(doc, indent=2, default=str) + "\n")
    tj = folder / TUNING_JSON_FILE
    if tj.is_file():
        t = json.loads(tj.read_text())
        t["calibration"] = doc
        t["rows"] = list(rows)
        tj.write_text(json.dumps(t, indent=2, default=str) + "\n")


def per_variant(spark, cfg: JobConfig, spec: LiveSpec) -> AgainstLive:
    """The runner's per-variant hook (tuning.runner.PerVariant)."""
    return AgainstLive(spark, cfg, spec)


def report(folder: Path) -> str:
    """What `replay tune --against-live` prints after the grid: the verdict and the ranking."""
    return (Path(folder) / FILE_MD).read_text().split("\n", 2)[2].rstrip()
