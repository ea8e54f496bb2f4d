"""Tenants in the SLA's violation periods (report JSON `sla.diagnosis.tenants` / `rules`).

Per tenant (requests.tenant: the loaders map tenant / tenant_id / user_id / user / customer to
it): its share of the requests in the violation windows and in the met windows, and its
per-request attainment in each (met / judged, as analysis.sla judges a request). Association rules (Agrawal & Srikant 1994) over one transaction
per request with the items tenant=<id> (the MAX_TENANTS busiest), long_prompt (prompt_tokens
above the 75th percentile of every request) and violation (the request arrived in a failing
window): mlxtend's FP-growth for the frequent item sets, association_rules for support,
confidence and lift, kept when the consequent is {violation} and the antecedent names a tenant.
Past FPGROWTH_ROWS requests FP-growth runs on a seeded sample of that many, to find the rules;
their support, confidence and lift are then counted on every request.
Each rule is tested against chance with Fisher's exact test (one-sided, greater) on the 2 x 2 of
antecedent x violation over all requests, Benjamini-Hochberg over the rules; a rule survives
with q < ALPHA, lift >= MIN_LIFT (evidence.MIN_EFFECT["lift"]) and >= MIN_SUPPORT requests.
More than MAX_ROWS requests: a seeded uniform sample of MAX_ROWS (said in `sampled`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .evidence import ALPHA, MIN_EFFECT, MIN_SUPPORT
from .results import num

MAX_TENANTS = 20
MAX_ROWS = 500_000
MIN_LIFT = MIN_EFFECT["lift"]
MIN_ITEM_SUPPORT = 0.002
REMOTE_ROWS = 100_000  # a warehouse sends at most this many request rows (10 % of 1M)
FPGROWTH_ROWS = 20_000  # mlxtend's FP-growth is pure Python per item set: 36 s on 480k rows


def request_frame(store, window_s: float, thresholds: dict) -> tuple[pd.DataFrame, bool]:
    """(run_id, k, tenant, prompt_tokens, ok: the request met the SLA, None when not judged)
    per request with an arrival time, and whether it is a sample; (None, False) when no request
    names a tenant, or the requests are in a warehouse (store.remote) and more than
    REMOTE_ROWS: the rules need one row per request, which the client does not fetch."""
    from ..sqlutil import quote_ident
    from .sla_windows import ERRORED, T0_CTE
    vals = {f"t{i}": float(t) for i, t in enumerate(thresholds.values())}
    cond = " AND ".join(f"{quote_ident(m)} <= $t{i}" for i, m in enumerate(thresholds))
    have = " AND ".join(f"{quote_ident(m)} IS NOT NULL" for m in thresholds)
    n, named = store.con.execute("SELECT count(*), count(tenant) FROM requests "
                                 "WHERE arrival_s IS NOT NULL").fetchall()[0]
    if not named or (getattr(store, "remote", False) and n > REMOTE_ROWS):
        return None, False
    sample = f"USING SAMPLE reservoir({MAX_ROWS} ROWS) REPEATABLE (7)" if n > MAX_ROWS else ""
    df = store.con.execute(f"""
        WITH {T0_CTE} SELECT * FROM (
            SELECT run_id, floor((arrival_s - t0) / $w)::BIGINT AS k,
                   tenant, prompt_tokens,
                   CASE WHEN {ERRORED} THEN false WHEN {have} THEN {cond} END AS ok
            FROM requests JOIN t0s USING (run_id)
            WHERE arrival_s IS NOT NULL AND isfinite(arrival_s)) {sample}""",
                           {"w": window_s, **vals}).df()
    return df, n > MAX_ROWS


def tenants(store, windows: pd.DataFrame, window_s: float, thresholds: dict) -> dict | None:
    """{tenants: [...], rules: [...], sampled, long_prompt_tokens}, None when no request names
    a tenant or no window failed."""
    req, sampled = request_frame(store, window_s, thresholds)
    if req is None or req["tenant"].isna().all():
        return None
    state = windows[["run_id", "k", "met"]].rename(columns={"met": "state"})
    req = req.merge(state, on=["run_id", "k"], how="left")
    req = req[req["state"].isin([True, False])]
    if req.empty or (req["state"] == True).all():  # noqa: E712 - object column
        return None
    viol = (req["state"] == False).to_numpy()  # noqa: E712
    ten = req["tenant"].astype("string").fillna("(none)")
    top = ten.value_counts().index[:MAX_TENANTS]
    rows = []
    ok = req["ok"].astype("boolean")
    for t in top:
        m = (ten == t).to_numpy()
        rows.append({"tenant": str(t), "share_violated": num(m[viol].mean()) if viol.any() else None,
                     "share_met": num(m[~viol].mean()) if (~viol).any() else None,
                     "n_violated": int((m & viol).sum()), "n_met": int((m & ~viol).sum()),
                     "attainment_violated": num(ok[m & viol].mean()),
                     "attainment_met": num(ok[m & ~viol].mean())})
    long_at = float(np.nanpercentile(req["prompt_tokens"].astype(float), 75)) \
        if req["prompt_tokens"].notna().any() else None
    items = pd.DataFrame({f"tenant={t}": (ten == t).to_numpy() for t in top})
    if long_at is not None:
        items["long_prompt"] = (req["prompt_tokens"].astype(float) > long_at).to_numpy()
    items["violation"] = viol
    return {"tenants": rows, "rules": rules(items), "sampled": sampled,
            "long_prompt_tokens": long_at}


def rules(items: pd.DataFrame) -> list[dict]:
    """Rules 'antecedent -> violation' (antecedent naming a tenant) with support, confidence,
    lift, Fisher's p, BH q and `survives` (module doc)."""
    from mlxtend.frequent_patterns import association_rules, fpgrowth
    from scipy import stats

    if not items["violation"].any():
        return []
    found = items.sample(FPGROWTH_ROWS, random_state=7) if len(items) > FPGROWTH_ROWS else items
    freq = fpgrowth(found, min_support=MIN_ITEM_SUPPORT, use_colnames=True, max_len=3)
    if freq.empty:
        return []
    ar = association_rules(freq, metric="lift", min_threshold=0.0)
    ar = ar[ar["consequents"].map(lambda c: c == frozenset({"violation"}))
            & ar["antecedents"].map(lambda a: any(x.startswith("tenant=") for x in a))]
    out = []
    v = items["violation"].to_numpy()
    n = len(v)
    for r in ar.itertuples(index=False):   # support, confidence, lift on every row
        a = np.logical_and.reduce([items[x].to_numpy() for x in sorted(r.antecedents)])
        k11, k10 = int((a & v).sum()), int((a & ~v).sum())
        k01, k00 = int((~a & v).sum()), int((~a & ~v).sum())
        if k11 + k10 == 0:
            continue
        conf = k11 / (k11 + k10)
        p = float(stats.fisher_exact([[k11, k10], [k01, k00]], alternative="greater").pvalue)
        out.append({"antecedent": sorted(r.antecedents), "consequent": "violation",
                    "support": k11 / n, "confidence": conf, "lift": conf / (v.sum() / n),
                    "n": k11, "p_value": p})
    if out:
        q = stats.false_discovery_control([r["p_value"] for r in out], method="bh")
        for r, qi in zip(out, q):
            r["p_adjusted"] = float(qi)
            r["survives"] = bool(qi < ALPHA and r["lift"] >= MIN_LIFT and r["n"] >= MIN_SUPPORT)
    return sorted(out, key=lambda r: (not r["survives"], -r["lift"]))
