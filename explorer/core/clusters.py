"""Badcase clusters: default (category), automatic (TF-IDF + k-means, k by silhouette),
renames kept with the session, and the per-cluster summary.

A badcase is a case with correct = false. A `cluster` column in the input wins; badcases
without one get their category (assign_default_clusters); auto_cluster replaces the clusters
of the badcases in its scope when the user asks for it. Renames are recorded in the
`cluster_names` table (old name -> display name) and re-applied to cases loaded later.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import pandas as pd

from .association import binding_label
from .errors import NoData

FALLBACK = "uncategorised"
AUTO_KEY = "clusters.auto"
_CJK = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")
_TOKEN = r"(?u)\b[^\W\d_][\w\-]+\b|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"


def _run(con, name: str, params: dict | None = None):
    from .association import _run as run
    return run(con, name, params)


def _save_setting(con, key, value) -> None:
    from .association import _save_setting as save
    save(con, key, value)


@dataclass(frozen=True)
class ClusterSummary:
    """One badcase cluster. share = badcases / all badcases (0..1); bound = badcases bound to a
    request at any level; binding_rate = bound / badcases; categories = the categories its
    badcases come from (sorted); per_level = {1: n, 2: n, 3: n}."""
    name: str
    badcases: int
    share: float
    bound: int
    binding_rate: float
    categories: tuple[str, ...] = ()
    per_level: dict[int, int] = field(default_factory=dict)

    def label(self) -> str:
        """ "21/23 (91%)": bound / badcases."""
        return binding_label(self.bound, self.badcases)

    def to_dict(self) -> dict:
        return {"name": self.name, "badcases": self.badcases, "share": self.share,
                "bound": self.bound, "binding_rate": self.binding_rate,
                "categories": list(self.categories),
                "per_level": {str(k): v for k, v in self.per_level.items()}}


def assign_default_clusters(store) -> int:
    """Badcases without a cluster get cluster = category (or "uncategorised"); renames recorded
    in cluster_names are then applied to cases still carrying an old name. Returns the number
    of cases whose cluster was filled."""
    con = store.cursor()
    try:
        n = _run(con, "clusters_assign_default", {"fallback": FALLBACK}).fetchall()[0][0]
        _run(con, "clusters_apply_renames")
    finally:
        con.close()
    return int(n)


def rename_cluster(store, old: str, new: str) -> None:
    """Rename badcase cluster `old` to `new` on every case (merging when `new` exists) and
    record it in cluster_names, so it is saved with the session and applied to cases loaded
    later. Raises ValueError for an empty new name, KeyError when no case has cluster `old`."""
    new = (new or "").strip()
    if not new:
        raise ValueError("a cluster name cannot be empty")
    if old == new:
        return
    con = store.cursor()
    try:
        have = con.execute("SELECT count(*) FROM cases WHERE cluster = ?", [old]).fetchall()[0][0]
        if not have:
            raise KeyError(f"no cluster named {old!r}")
        con.execute("BEGIN TRANSACTION")
        try:
            _run(con, "clusters_rename_cases", {"old": old, "new": new})
            _run(con, "clusters_names_forget", {"new": new})
            _run(con, "clusters_names_redirect", {"old": old, "new": new})
            _run(con, "clusters_names_record", {"old": old, "new": new})
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        con.close()


def cluster_summary(store) -> list[ClusterSummary]:
    """One ClusterSummary per badcase cluster, most badcases first
    (queries/clusters_summary.sql). Empty when there is no badcase."""
    con = store.cursor()
    try:
        df = _run(con, "clusters_summary").df()
    finally:
        con.close()
    out = []
    for r in df.itertuples(index=False):
        bad = int(r.badcases)
        cats = tuple(c for c in (list(r.categories) if r.categories is not None else [])
                     if c is not None)
        out.append(ClusterSummary(
            name=r.cluster, badcases=bad, share=float(r.share), bound=int(r.bound),
            binding_rate=int(r.bound) / bad if bad else 0.0, categories=cats,
            per_level={1: int(r.level1), 2: int(r.level2), 3: int(r.level3)}))
    return out


def _prepare_text(t: str) -> str:
    return _CJK.sub(r" \1 ", t or "")


def _best_k_means(X, ks: list[int], seed: int) -> tuple[list, int, float] | None:
    """k-means of the rows of X for each k of ks: (labels, k, silhouette (cosine)) of the
    best, None when no k splits the rows in two."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score
    from threadpoolctl import threadpool_limits
    n = X.shape[0]
    best = None
    n_init = 10 if n <= 2000 else 3
    # one BLAS / OpenMP thread: many small fits are far faster without thread start-up
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fewer distinct texts than kk: k-means warns
        for kk in ks:
            km = KMeans(n_clusters=kk, n_init=n_init, random_state=seed).fit(X)
            if len(set(km.labels_)) < 2:
                continue
            s = silhouette_score(X, km.labels_, metric="cosine",
                                 sample_size=min(n, 2000), random_state=seed)
            if best is None or s > best[0]:
                best = (s, kk, km.labels_)
    return None if best is None else (list(best[2]), best[1], float(best[0]))


def _cluster_names(X, terms, labels: list, order) -> dict[int, str]:
    """Each cluster's name, in `order` (largest first): its three heaviest centroid terms
    ("derivative / integral / limit"), FALLBACK without any, "(2)", "(3)"... on a repeat."""
    names: dict[int, str] = {}
    used: set[str] = set()
    for lab in order:
        name = FALLBACK
        if X is not None and X.shape[1] > 0:
            rows = [i for i, x in enumerate(labels) if x == lab]
            centroid = X[rows].mean(axis=0).A1
            top = [terms[j] for j in centroid.argsort()[::-1][:3] if centroid[j] > 0]
            if top:
                name = " / ".join(top)
        base, i = name, 2
        while name in used:
            name = f"{base} ({i})"
            i += 1
        used.add(name)
        names[int(lab)] = name
    return names


def auto_cluster(store, eval_id: str | None = None, k: int | None = None,
                 seed: int = 0) -> list[str]:
    """Cluster the badcases (of one eval, or all) by their text and set cases.cluster.

    Text = prompt + prediction; features = TF-IDF (sublinear tf, English stop words removed,
    terms in more than 90% of the badcases dropped; Chinese characters count as single
    terms); k-means (scikit-learn, n_init=10 (3 above 2000 badcases), random_state=seed) on the L2-normalised vectors;
    k = the argument, else the k in 2..min(10, n - 1) with the highest silhouette (cosine
    distance; Rousseeuw 1987). Each cluster is named by its three heaviest centroid terms
    ("derivative / integral / limit"). Deterministic for a given seed. The choice is saved
    with the session (setting "clusters.auto"). Returns the cluster names, largest first.
    Raises NoData when there is no badcase, ValueError for k < 1.
    """
    if k is not None and k < 1:
        raise ValueError("k must be at least 1")
    con = store.cursor()
    try:
        df = _run(con, "clusters_badcases", {"eval_id": eval_id}).df()
    finally:
        con.close()
    if df.empty:
        raise NoData("there are no badcases to cluster" + (f" in eval {eval_id}" if eval_id else ""))
    from sklearn.feature_extraction.text import TfidfVectorizer

    n = len(df)
    texts = [_prepare_text(t) for t in df["text"]]
    vec = TfidfVectorizer(token_pattern=_TOKEN, stop_words="english", sublinear_tf=True,
                          max_df=0.9 if n >= 10 else 1.0, max_features=20000)
    try:
        X = vec.fit_transform(texts)
    except ValueError:  # no usable term at all
        X = None
    labels, chosen, score = [0] * n, 1, None
    if X is not None and X.shape[1] > 0 and n >= 3 and (k is None or k > 1):
        best = _best_k_means(X, [min(k, n)] if k else list(range(2, min(10, n - 1) + 1)), seed)
        if best is not None:
            labels, chosen, score = best
    sizes = pd.Series(labels).value_counts()
    names = _cluster_names(X, vec.get_feature_names_out() if X is not None else [], labels,
                           sizes.index)
    assign = pd.DataFrame({"case_id": df["case_id"], "cluster": [names[int(x)] for x in labels]})
    con = store.cursor()
    try:
        con.register("_cluster_assign", assign)
        _run(con, "clusters_set")
        con.unregister("_cluster_assign")
        _save_setting(con, AUTO_KEY, {"eval_id": eval_id, "k": chosen, "silhouette": score,
                                      "seed": seed})
    finally:
        con.close()
    return [names[int(lab)] for lab in sizes.index]
