"""Item by item: two evals (or the cases bound to two runs) that answered the same items.

An item is the case id without its eval's prefix ("mmlu_pro:<model>:7730" -> "7730"); where the
two sides share no such id, the prompt hash. Per pair: both right, only A right, only B right,
both wrong; the exact McNemar p (stats.mcnemar_exact); each accuracy with its Wilson interval;
the paired bootstrap of the accuracy difference; a warning below MIN_PAIRED items (the
discordant counts of a few hundred items decide little). Where the items are bound to requests,
the engine state of the items each side lost (right on the other side, wrong on this one)
against this side's other items: mean KV-cache hit rate, preemptions, batch size, queue time,
with a Mann-Whitney U p.
"""
from __future__ import annotations

import pandas as pd

from explorer.core.i18n import _, ngettext

from . import stats as st

MIN_PAIRED = 300
STATE = ("kv_cache_hit_rate", "num_preemptions", "batch_size", "queue_ms")


def item_frame(store) -> pd.DataFrame:
    df = store.query("compare_items")
    if df.empty:
        return df
    prefix = df["eval_id"].fillna("") + ":"
    own = [c[len(p):] if isinstance(c, str) and c.startswith(p) else c
           for c, p in zip(df["case_id"], prefix)]
    return df.assign(item=own, correct=df["correct"].astype(bool))


def _side(df: pd.DataFrame, key: str) -> pd.DataFrame:
    return df.dropna(subset=[key]).drop_duplicates(key).set_index(key)


def compare_items(a: pd.DataFrame, b: pd.DataFrame, alpha: float = 0.05) -> dict | None:
    """The `items` of a pair from each side's case rows (item_frame rows), None when they
    share no item."""
    key = "item"
    A, B = _side(a, key), _side(b, key)
    common = A.index.intersection(B.index)
    if not len(common) and "prompt_hash" in a:
        key = "prompt_hash"
        A, B = _side(a, key), _side(b, key)
        common = A.index.intersection(B.index)
    if not len(common):
        return None
    ca = A.loc[common, "correct"].to_numpy(bool)
    cb = B.loc[common, "correct"].to_numpy(bool)
    n = len(common)
    both = int((ca & cb).sum())
    a_only = int((ca & ~cb).sum())
    b_only = int((~ca & cb).sum())
    none = int((~ca & ~cb).sum())
    out = {"paired": n, "key": key, "both_right": both, "a_only_right": a_only,
           "b_only_right": b_only, "both_wrong": none,
           "mcnemar_p": st.mcnemar_exact(b_only, a_only),
           "accuracy_a": st.wilson(int(ca.sum()), n, alpha),
           "accuracy_b": st.wilson(int(cb.sum()), n, alpha),
           "difference": st.paired_bootstrap(ca, cb, alpha),
           "unpaired_a": int(len(A) - n), "unpaired_b": int(len(B) - n), "warnings": [],
           "lost_by_b": [str(x) for x in common[ca & ~cb]][:200],
           "lost_by_a": [str(x) for x in common[~ca & cb]][:200],
           # the case ids of the flipped items, each on the side that lost it (the window
           # selects them in the Cases table)
           "flipped_cases": [str(x) for x in B.loc[common[ca & ~cb], "case_id"]][:500]
           + [str(x) for x in A.loc[common[~ca & cb], "case_id"]][:500]}
    if n < MIN_PAIRED:
        out["warnings"].append(ngettext(
            "only {n} paired item (fewer than {m}): the test has little power",
            "only {n} paired items (fewer than {m}): the test has little power", n).format(
                n=n, m=MIN_PAIRED))
    out["engine_state"] = {
        side: s for side, s in (("a", _state(A.loc[common], ~ca & cb, "a")),
                                ("b", _state(B.loc[common], ca & ~cb, "b"))) if s}
    return out


def _state(rows: pd.DataFrame, lost, side: str) -> dict | None:
    """The engine state of the items `side` lost against its other items, where bound."""
    from scipy import stats
    if rows["request_id"].isna().all():
        return None
    flipped, others = rows[lost], rows[~lost]
    out = {"lost": len(flipped), "others": len(others), "metrics": []}
    for m in STATE:
        x = pd.to_numeric(flipped[m], errors="coerce").dropna()
        y = pd.to_numeric(others[m], errors="coerce").dropna()
        if not len(x) or not len(y):
            continue
        p = (float(stats.mannwhitneyu(x, y, alternative="two-sided").pvalue)
             if len(x) > 1 and len(y) > 1 and (x.nunique() > 1 or y.nunique() > 1) else None)
        out["metrics"].append({"metric": m, "lost_mean": float(x.mean()),
                               "others_mean": float(y.mean()), "n_lost": len(x),
                               "n_others": len(y), "p_value": p})
    if out["metrics"]:
        m0 = out["metrics"][0]
        out["sentence"] = _("the {n} items {side} lost ran with a mean {metric} of {x:.3g} "
                            "against {y:.3g} for its other items").format(
                                n=out["lost"], side=side.upper(), metric=m0["metric"],
                                x=m0["lost_mean"], y=m0["others_mean"])
    return out if out["metrics"] else None


def eval_pairs(df: pd.DataFrame, alpha: float = 0.05) -> list[dict]:
    """Pairs of evals of one benchmark that share items (in eval order)."""
    out = []
    if df.empty:
        return out
    evals = [(e, g) for e, g in df.groupby("eval_id", sort=True)]
    for i, (ea, ga) in enumerate(evals):
        for eb, gb in evals[i + 1:]:
            if ga["benchmark"].iloc[0] != gb["benchmark"].iloc[0]:
                continue
            items = compare_items(ga, gb, alpha)
            if items is None:
                continue
            out.append({"a": ea, "b": eb, "kind": "eval", "runs_a": [], "runs_b": [],
                        "same_workload": True, "model_a": ga["model"].iloc[0],
                        "model_b": gb["model"].iloc[0], "metrics": [], "notes": [],
                        "items": items})
    return out


def run_items(df: pd.DataFrame, runs_a: list[str], runs_b: list[str],
              alpha: float = 0.05) -> dict | None:
    """The items of a run pair: the cases bound to each side's runs."""
    if df.empty or df["run_id"].isna().all():
        return None
    a = df[df["run_id"].isin(runs_a)]
    b = df[df["run_id"].isin(runs_b)]
    if a.empty or b.empty:
        return None
    return compare_items(a, b, alpha)
