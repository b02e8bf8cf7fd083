"""A changed aggregate: windows whose rows agree on both sides (count equal, no late row on either side) but whose
other aggregate does not; the hint says when live = c x replay or live = replay + c in every one of them."""
from __future__ import annotations

from typing import Any, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from .wording import n_or_0


def rows_agree(cnt: str) -> Column:
    return ((F.col("class") == "value_differs") & F.col(f"eq_{cnt}") & (F.col("replay_late_n") == 0)
            & (n_or_0("late_replay_only_n") == 0) & (n_or_0("late_live_only_n") == 0))


def changed_aggregate_aggs(aggs: Sequence[str], cnt: str) -> list[Column]:
    """Per aggregate other than the count, over the windows whose rows agree but whose value does not: how many,
    and the range of live/replay and live - replay (one pass with the other hint figures)."""
    out = []
    for i, a in enumerate(x for x in aggs if x != cnt):
        live, rep = F.col(f"live_{a}").try_cast("double"), F.col(f"replay_{a}").try_cast("double")
        sel = rows_agree(cnt) & ~F.col(f"eq_{a}")
        ratio = F.when(sel & (rep != 0), live / rep)
        diff = F.when(sel, live - rep)
        out += [F.sum(sel.cast("long")).alias(f"ca{i}_n"), F.min(ratio).alias(f"ca{i}_rlo"),
                F.max(ratio).alias(f"ca{i}_rhi"), F.min(diff).alias(f"ca{i}_dlo"), F.max(diff).alias(f"ca{i}_dhi")]
    return out


def changed_aggregate_hints(r, aggs: Sequence[str], cnt: str) -> list[dict[str, Any]]:
    out = []
    for i, a in enumerate(x for x in aggs if x != cnt):
        n, rlo, rhi, dlo, dhi = (r[f"ca{i}_{k}"] for k in ("n", "rlo", "rhi", "dlo", "dhi"))
        if not n:
            continue
        how = ""
        if rlo is not None and rhi is not None and abs(rhi - rlo) <= 1e-9 * max(1, abs(rhi)):
            how = f" In every one of them live {a} = {rlo:g} x replayed {a}."
        elif dlo is not None and dlo == dhi:
            how = f" In every one of them live {a} = replayed {a} {'+' if dlo >= 0 else '-'} {abs(dlo):g}."
        out.append({"kind": "changed_aggregate", "aggregate": a, "windows": int(n), "text": (
            f"{n} windows have the same rows on both sides ({cnt} equal, no late row on either side) but "
            f"another {a}: the live job computes {a} differently from the config's `{a}` (a changed aggregate)."
            + how)})
    return out
