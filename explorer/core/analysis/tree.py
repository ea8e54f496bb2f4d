"""Decision-tree delimitation (DESIGN `tree`): which engine conditions separate badcases
from the control, the workload (prompt / output tokens, WORKLOAD_FEATURES) offered first.

A scikit-learn DecisionTreeClassifier (Gini, max_depth 3 by default, min_samples_leaf a
parameter, random_state seeded) predicts badcase (1) vs control (0) from the engine metrics of
the bound cases. Per node: n, n_bad and error_rate (share of badcases among the node's cases,
counted over every usable case that reaches it, also when the splits were fitted on a sample
of a large cohort), the split feature and threshold (a row goes "le" when feature <=
threshold, else "gt", as scikit-learn splits).

NaN handling: only bound cases are used; a feature enters when at least `min_coverage` (0.5) of
the bound cases have it and it varies; cases missing any entered feature are dropped (counted
in dropped_rows) rather than imputed, so every node is exactly a TreePath predicate (SQL NULL
fails every comparison, as the dropped rows were never in the tree).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import NoData
from ..selection import And, Range, TreePath
from .cohort import CONTEXT_METRICS, ENGINE_METRICS, Cohort, cohort_frame
from .evidence import MIN_SUPPORT
from .results import TreeNode, TreeResult
from ..i18n import N_, _
from ..names import COUNT_FEATURES, condition_text

# Outcome metrics: consequences of a slow or failed request, not engine conditions that cause
# one; they are tree features only when the user adds them (params["features"]).
OUTCOME_METRICS = ("e2e_ms",)
DEFAULTS = {"max_depth": 3, "min_samples_leaf": None,
            "features": tuple(m for m in ENGINE_METRICS + CONTEXT_METRICS
                              if m not in OUTCOME_METRICS),
            "min_coverage": 0.5, "seed": 0, "fit_max_n": 20000, "holdout": True}
# What the cases were asked: tree features before the engine metrics (their splits name no
# module: the conclusion reads only engine features' splits, and only where the feature's own
# difference holds at equal workload).
WORKLOAD_FEATURES = ("prompt_tokens", "completion_tokens")
NAN_POLICY = (N_("bound cases only; features present in fewer than min_coverage of them are left "
              "out; cases missing an entered feature are dropped, not imputed"))


def fmt_threshold(value: float, integral: bool) -> str:
    """Threshold as the user reads it, as plain_number writes it (the node conditions and the
    risk sentence agree: "e2e_ms <= 6,399", never "6.4e+03"): an integer feature's x.5 split
    shows as its floor (x <= 2.5 is x <= 2 and x > 2.5 is x > 2 for integers)."""
    return plain_number(value, integral)


def _condition(feature: str, side: str, thr: float, integral: bool) -> str:
    return f"{feature} {'<=' if side == 'le' else '>'} {fmt_threshold(thr, integral)}"


# Readable names of the metrics for the tree's risk sentence and the conclusion (the same words
# the app's painters use, widgets/painters/common.LABELS); units come from schema.REQUEST_METRICS.
METRIC_NAMES = {"kv_cache_hit_rate": N_("KV-cache hit rate"), "num_preemptions": N_("preemptions"),
                "tpot_ms": N_("TPOT"), "batch_size": N_("batch size"), "ttft_ms": N_("TTFT"),
                "queue_ms": N_("scheduling delay"), "e2e_ms": N_("E2E latency"), "prefill_ms": N_("prefill"),
                "decode_ms": N_("decode"), "prompt_tokens": N_("prompt tokens"),
                "completion_tokens": N_("output tokens"), "cached_prompt_tokens": N_("cached prompt tokens"),
                "prompt_chars": N_("prompt length"), "prediction_chars": N_("answer length"),
                "engine_running": N_("engine running requests"),
                "engine_waiting": N_("engine waiting requests"),
                "engine_kv_usage": N_("engine KV-cache usage"),
                "engine_prefix_hit_rate": N_("engine prefix-cache hit rate")}


def metric_name(feature: str) -> str:
    """The readable name of a metric in the current language."""
    return _(METRIC_NAMES[feature]) if feature in METRIC_NAMES else feature.replace("_", " ")


def plain_number(value: float, integral: bool = False, unit: str = "") -> str:
    """A threshold in plain notation, never scientific: an integer feature's x.5 split as its
    floor (see fmt_threshold); >= 100 rounded with thousands separators ("3,070"), else 3
    significant digits ("18.3", "0.352"); the unit after a space ("3,070 ms")."""
    if integral:
        s = f"{int(np.floor(value)):,}"
    elif value != 0 and abs(value) >= 100:
        s = f"{value:,.0f}"
    elif value != 0 and abs(value) < 0.001:
        s = f"{value:.6f}".rstrip("0").rstrip(".")
    else:
        s = f"{float(f'{value:.3g}'):g}"
    return f"{s} {unit}" if unit else s


def _readable(feature: str, side: str, thr: float, integral: bool) -> str:
    """"scheduling delay ≤ 3,070 ms": the feature's readable name, ≤ / >, the plain number."""
    from ..schema import REQUEST_METRICS
    name = metric_name(feature)
    unit = REQUEST_METRICS.get(feature, "")
    return f"{name} {'≤' if side == 'le' else '>'} {plain_number(thr, integral, unit)}"


def _varies(col: pd.Series) -> bool:
    """More than one distinct non-NULL value (col.nunique(dropna=True) > 1 without hashing:
    a min / max pass over the float values)."""
    if not pd.api.types.is_float_dtype(col.dtype):
        return col.nunique(dropna=True) > 1
    v = col.to_numpy(dtype=float)
    v = v[~np.isnan(v)]
    return bool(len(v)) and bool(v.min() < v.max())


def frame_columns(params: dict | None = None) -> tuple[str, ...]:
    """The cohort-frame columns fit_tree reads with `params`: badcase, request_id, the
    workload and the features."""
    return tuple(dict.fromkeys(("badcase", "request_id", *WORKLOAD_FEATURES,
                                *{**DEFAULTS, **(params or {})}["features"])))


def fit_tree(store, cohort: Cohort, params: dict | None = None,
             frame: pd.DataFrame | None = None) -> TreeResult:
    """Fit the tree and read it (see the module doc).

    params: max_depth (3), min_samples_leaf (None = max(5, 1% of the rows fitted)), features
    (default the 7 engine metrics), min_coverage (0.5), seed (0), fit_max_n (20000: larger
    cohorts are fitted on a seeded random sample of that many cases; n and error rates of every
    node are still counted over every case).
    Raises NoData when no case is bound, no feature has enough data, or one group is empty."""
    from sklearn.tree import DecisionTreeClassifier

    p = {**DEFAULTS, **(params or {})}
    if frame is None:
        frame = cohort_frame(store, cohort)
    if p.get("workload", True) and "features" not in (params or {}):
        # the workload first: where the prompt or answer length explains the error, the tree
        # splits on it before any engine metric (issue 35)
        p["features"] = tuple(dict.fromkeys(
            [f for f in WORKLOAD_FEATURES if f in frame] + list(p["features"])))
    # the bound rows of the columns read (features and badcase), not of the whole frame
    cols = list(dict.fromkeys([f for f in p["features"] if f in frame] + ["badcase"]))
    bound = frame.loc[frame["request_id"].notna().to_numpy(), cols]
    if bound.empty:
        raise NoData(_("no case of the cohort is bound to a trace request, so there are no "
                     "engine metrics to split on"))
    feats = _features(bound, p["features"], p["min_coverage"])
    data = bound.dropna(subset=feats)
    dropped = len(bound) - len(data)
    y = data["badcase"].to_numpy(dtype=int)
    if y.min() == y.max():
        raise NoData(_("the bound cases are all ") + ("badcases" if y[0] else _("control cases"))
                     + _(": nothing to separate"))
    if y.sum() < MIN_SUPPORT:
        raise NoData(_("only {sum} bound badcase{x} with every "
                     "tree feature recorded: a tree needs at least {MIN_SUPPORT} to separate "
                     "them from the control").format(sum=int(y.sum()), x='s' if y.sum() != 1 else '', MIN_SUPPORT=MIN_SUPPORT))
    X = data[feats].to_numpy(dtype=float)
    fit_idx = np.arange(len(y))
    if p["fit_max_n"] and len(y) > p["fit_max_n"]:
        fit_idx = np.sort(np.random.default_rng(p["seed"]).choice(len(y), p["fit_max_n"],
                                                                   replace=False))
    leaf = p["min_samples_leaf"] or max(5, int(0.01 * len(fit_idx)))
    if y[fit_idx].min() == y[fit_idx].max():
        fit_idx = np.arange(len(y))
    clf = DecisionTreeClassifier(max_depth=p["max_depth"], min_samples_leaf=leaf,
                                 random_state=p["seed"]).fit(X[fit_idx], y[fit_idx])
    t = clf.tree_
    path = clf.decision_path(X)  # sparse (rows x nodes)
    n_node = np.asarray(path.sum(axis=0)).ravel().astype(int)
    bad_node = np.asarray(path.T @ y).ravel().astype(int)
    integral = {f: bool(np.all(np.mod(data[f].to_numpy(dtype=float), 1) == 0)) for f in feats}
    nodes = _nodes(t, feats, n_node, bad_node, integral)
    baseline = float(y.mean())
    chain = _riskiest_path(nodes)
    sentence = _sentence(nodes, chain, baseline, integral)
    held = _holdout(X, y, feats, p, integral) if p["holdout"] else None
    return TreeResult(max_depth=p["max_depth"], min_samples_leaf=leaf,
                      baseline_error_rate=baseline, nodes=tuple(nodes), features=tuple(feats),
                      n=len(data), dropped_rows=dropped, riskiest_path=tuple(chain),
                      sentence=sentence, nan_policy=_(NAN_POLICY), holdout=held)


def _features(bound: pd.DataFrame, features, min_coverage: float) -> list[str]:
    """The features recorded for at least min_coverage of the bound cases and varying there;
    ValueError for a feature that is no column, NoData when none is left."""
    feats = []
    for f in features:
        col = bound[f] if f in bound else None
        if col is None:
            raise ValueError(_("unknown tree feature {f!r}").format(f=f))
        if col.notna().mean() >= min_coverage and _varies(col):
            feats.append(f)
    if not feats:
        raise NoData(_("no engine metric is recorded (and varies) for enough bound cases "
                     "(at least {min_coverage:.0%} of them)").format(min_coverage=min_coverage))
    return feats


def _nodes(t, feats: list[str], n_node, bad_node, integral: dict) -> list[TreeNode]:
    """The fitted sklearn tree `t` read node by node: its parent, side and depth, its split,
    the condition that leads to it, and its counts over every case (n_node, bad_node)."""
    parent = {0: None}
    side = {0: None}
    depth = {0: 0}
    for i in range(t.node_count):
        for child, s in ((t.children_left[i], "le"), (t.children_right[i], "gt")):
            if child != -1:
                parent[child], side[child], depth[child] = i, s, depth[i] + 1
    nodes = []
    for i in range(t.node_count):
        is_leaf = t.children_left[i] == -1
        par = parent[i]
        cond = None
        if par is not None:
            pf = feats[t.feature[par]]
            cond = _condition(pf, side[i], float(t.threshold[par]), integral[pf])
        nodes.append(TreeNode(
            id=i, parent=par, feature=None if is_leaf else feats[t.feature[i]],
            threshold=None if is_leaf else float(t.threshold[i]), side=side[i],
            n=int(n_node[i]), n_bad=int(bad_node[i]),
            error_rate=bad_node[i] / n_node[i] if n_node[i] else None, is_leaf=bool(is_leaf),
            depth=depth[i], condition=cond))
    return nodes


def _riskiest_path(nodes: list[TreeNode]) -> list[int]:
    """Node ids from the root to the leaf with the highest error rate (then the most cases,
    then the lowest id)."""
    risky = max((n for n in nodes if n.is_leaf), key=lambda n: (n.error_rate or 0.0, n.n, -n.id))
    chain = []
    k = risky.id
    while k is not None:
        chain.append(k)
        k = nodes[k].parent
    chain.reverse()
    return chain


def _holdout(X: np.ndarray, y: np.ndarray, feats: list, p: dict, integral: dict) -> dict:
    """An honest estimate of the riskiest leaf (sample splitting): the same tree is fitted on a
    seeded half of the cases (stratified by badcase), its riskiest leaf picked there, and that
    leaf's error rate counted on the other half, which played no part in finding it; p is
    Fisher's exact test (one-sided, "greater") of the held-out leaf against the held-out rest,
    lift = held-out leaf error rate / held-out baseline."""
    from scipy import stats
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(p["seed"] + 1)
    fit = np.zeros(len(y), bool)
    for cls in (0, 1):
        idx = np.flatnonzero(y == cls)
        fit[rng.permutation(idx)[: len(idx) // 2]] = True
    out = {"method": _("sample splitting: fitted on one half, counted on the other"),
           "fit_n": int(fit.sum()), "test_n": int((~fit).sum()), "steps": [], "condition": None,
           "n": 0, "n_bad": 0, "error_rate": None, "baseline_error_rate": None, "lift": None,
           "p_value": None, "reason": None}
    fi = np.flatnonzero(fit)
    if p["fit_max_n"] and len(fi) > p["fit_max_n"]:
        fi = np.sort(rng.choice(fi, p["fit_max_n"], replace=False))
    if y[fi].min() == y[fi].max() or y[~fit].min() == y[~fit].max():
        out["reason"] = _("too few badcases or control cases to split the cases in two")
        return out
    leaf = p["min_samples_leaf"] or max(5, int(0.01 * len(fi)))
    clf = DecisionTreeClassifier(max_depth=p["max_depth"], min_samples_leaf=leaf,
                                 random_state=p["seed"]).fit(X[fi], y[fi])
    t = clf.tree_
    leaves = np.flatnonzero(t.children_left == -1)
    if len(leaves) < 2:
        out["reason"] = _("the half-sample tree finds no split")
        return out
    fit_leaf = clf.apply(X[fi])
    rate = {k: y[fi][fit_leaf == k].mean() for k in leaves}
    best = max(leaves, key=lambda k: (rate[k], (fit_leaf == k).sum(), -k))
    steps, k = [], best
    parents = {c: (i, s) for i in range(t.node_count)
               for c, s in ((t.children_left[i], "le"), (t.children_right[i], "gt")) if c != -1}
    while k in parents:
        par, side = parents[k]
        steps.append((feats[t.feature[par]], side, float(t.threshold[par])))
        k = par
    steps.reverse()
    test = ~fit
    inside = clf.apply(X[test]) == best
    yt = y[test]
    n, nb = int(inside.sum()), int(yt[inside].sum())
    base = float(yt.mean())
    out.update(steps=[{"feature": f, "side": s, "threshold": thr} for f, s, thr in steps],
               condition=_path_text(steps, integral), n=n, n_bad=nb, baseline_error_rate=base)
    if n == 0:
        out["reason"] = _("no held-out case reaches the leaf")
        return out
    out["error_rate"] = nb / n
    out["lift"] = out["error_rate"] / base
    rest_n, rest_b = int((~inside).sum()), int(yt[~inside].sum())
    out["p_value"] = float(stats.fisher_exact([[nb, n - nb], [rest_b, rest_n - rest_b]],
                                              alternative="greater").pvalue)
    return out


def node_condition(tree: TreeResult, node_id: int) -> str:
    """A node named by the path that reaches it, as the risk sentence reads it: "preemptions >
    2 and scheduling delay > 1,952 ms"; the root: "all cases". Thresholds of a count read as
    whole numbers (a split at x.5 is a split between integers). Raises KeyError."""
    by_id = {n.id: n for n in tree.nodes}
    chain, k = [], by_id[node_id].id
    while k is not None:
        chain.append(k)
        k = by_id[k].parent
    chain.reverse()
    steps = _steps(tree.nodes, chain)
    counts = [(f, side, thr) for f, side, thr in steps if f in COUNT_FEATURES]
    if not counts:
        integral = {f: float(thr * 2) % 2 == 1 for f, _s, thr in steps}
        return _path_text(steps, integral) or _("all cases")
    # counts read as counts ("preemptions = 0", "1 ≤ preemptions ≤ 2", "preemptions ≥ 3")
    parts, done = [], set()
    for f, _s, _t in steps:
        if f in done:
            continue
        done.add(f)
        mine = [(s_, t) for g, s_, t in steps if g == f]
        if f not in COUNT_FEATURES:
            parts.append(_path_text([(f, s_, t) for s_, t in mine], {f: False}))
            continue
        le = min((t for s_, t in mine if s_ == "le"), default=None)
        gt = max((t for s_, t in mine if s_ == "gt"), default=None)
        if le is not None and gt is not None:
            lo, hi = int(gt // 1) + 1, int(le // 1)
            parts.append(f"{metric_name(f)} = {lo:,}" if lo == hi else
                         f"{lo:,} ≤ {metric_name(f)} ≤ {hi:,}")
        else:
            parts.append(condition_text(f, "<=" if le is not None else ">",
                                        le if le is not None else gt))
    return _(" and ").join(parts)


def _steps(nodes, chain) -> list[tuple[str, str, float]]:
    by_id = {n.id: n for n in nodes}
    return [(by_id[by_id[c].parent].feature, by_id[c].side, by_id[by_id[c].parent].threshold)
            for c in chain[1:]]


def _sentence(nodes, chain, baseline, integral) -> str:
    """"KV-cache hit rate ≤ 0.35 and preemptions > 2: error rate 89% (n=18) against a 12%
    baseline" for the riskiest path, with repeated features merged to their tightest bound;
    readable metric names, plain numbers with units ("scheduling delay ≤ 3,070 ms")."""
    leaf = {n.id: n for n in nodes}[chain[-1]]
    tail = _("error rate {error_rate:.0%} (n={n}) against a {baseline:.0%} baseline").format(error_rate=leaf.error_rate, n=leaf.n, baseline=baseline)
    text = _path_text(_steps(nodes, chain), integral)
    if not text:
        return _("no split separates badcases from the control: {tail}").format(tail=tail)
    return text + ": " + tail


def _path_text(steps, integral) -> str:
    """The conditions of a path, repeated features merged to their tightest bound."""
    le: dict[str, float] = {}
    gt: dict[str, float] = {}
    order: list[str] = []
    for f, s, thr in steps:
        if f not in order:
            order.append(f)
        if s == "le":
            le[f] = min(thr, le.get(f, np.inf))
        else:
            gt[f] = max(thr, gt.get(f, -np.inf))
    from ..schema import REQUEST_METRICS
    parts = []
    for f in order:
        if f in gt and f in le:
            unit = REQUEST_METRICS.get(f, "")
            parts.append(f"{plain_number(gt[f], integral[f])} < "
                         f"{metric_name(f)} ≤ "
                         f"{plain_number(le[f], integral[f], unit)}")
        elif f in le:
            parts.append(_readable(f, "le", le[f], integral[f]))
        else:
            parts.append(_readable(f, "gt", gt[f], integral[f]))
    return _(" and ").join(parts)


def tree_node_predicate(tree: TreeResult, node_id: int) -> And:
    """The predicate of the cases / requests reaching node `node_id`: every tree feature
    present (the tree was fit without rows missing one) and the TreePath of exact thresholds
    from the root. (scikit-learn compares in float32; a value within float32 rounding of a
    threshold may fall on the other side in SQL.) Evaluated on the whole store it also selects rows outside the cohort: combine
    it with the cohort (Cohort(selection=...)) to stay inside. Raises KeyError for an unknown
    node."""
    by_id = {n.id: n for n in tree.nodes}
    if node_id not in by_id:
        raise KeyError(_("the tree has no node {node_id}").format(node_id=node_id))
    chain = []
    k = node_id
    while k is not None:
        chain.append(k)
        k = by_id[k].parent
    chain.reverse()
    return And(*(Range(f) for f in tree.features), TreePath(tuple(_steps(tree.nodes, chain))))
