"""Binding eval cases to warehouse requests, in the engine: the same queries/assoc_*.sql stages
as explorer.core.association.bind_cases, each staged table computed once in the engine; only the
links (one row per bound case) and the ambiguous cases come back, into the local store's
case_links."""
from __future__ import annotations

import re

from ..association import (_TEMP_TABLES, AMBIGUOUS_KEY, FUZZY_RESTAGE, SETTING_KEY,
                           AssociationResult, binding_params, binding_rates, overall_rate,
                           stage_level1, stored_tolerances)
from ..sqlutil import load_query

_CREATE = re.compile(r"^CREATE OR REPLACE TEMP TABLE (\w+) AS\s*$", re.M)
_INSERT = re.compile(r"^INSERT INTO case_links \([^)]*\)\s*$", re.M)
_EMPTY_FUZZY = "ck bigint, rk bigint, run_id string, nconds int, n_best bigint, score double"


def _stage(source, name: str, params: dict) -> None:
    sql = load_query(name)
    m = _CREATE.search(sql)
    source.materialize(m.group(1), sql[m.end():], params)


def bind_in_engine(store, tol=None) -> AssociationResult:
    """Bind every case of store.local to at most one warehouse request (rules: association.py);
    rewrites the local case_links and the engine's te_case_links."""
    src, local = store.source, store.local
    tol = tol or stored_tolerances(local)
    params = binding_params(tol)
    try:
        params = stage_level1(lambda name, p: _stage(src, name, p),
                              lambda sql: int(src.fetch(sql)["n"].iloc[0]), params)
        left = src.fetch("SELECT count(*) AS n FROM _assoc_cases c ANTI JOIN _assoc_l1 l USING (ck)")
        if int(left["n"].iloc[0]):
            for name in FUZZY_RESTAGE:  # the first pass staged only the requests ids name
                _stage(src, name, {**params, "all": True})
            _stage(src, "assoc_fuzzy", params)
        else:
            src.session.createDataFrame([], _EMPTY_FUZZY).createOrReplaceTempView("_assoc_fuzzy")
            src.staged.add("_assoc_fuzzy")
        ambiguous = src.fetch(load_query("assoc_ambiguous"))
        write = load_query("assoc_write_links")
        links = src.fetch(write[_INSERT.search(write).end():])
    finally:
        for t in _TEMP_TABLES:  # only the staged ones: each drop is a round trip
            if t not in src.staged:
                continue
            try:
                src.session.catalog.dropTempView(t)
                src.staged.discard(t)
            except Exception:  # noqa: BLE001 - a stage that never ran
                pass
    con = local.con
    con.execute("DELETE FROM case_links")
    if len(links):
        con.register("_te_links", links)
        try:
            con.execute("INSERT INTO case_links BY NAME SELECT * FROM _te_links")
        finally:
            con.unregister("_te_links")
    src.upload("case_links", con.execute("SELECT * FROM case_links").df())
    amb = sorted(set(ambiguous["case_id"].tolist()))
    local.set_setting(SETTING_KEY, tol.to_dict())
    local.set_setting(AMBIGUOUS_KEY, amb)
    total = overall_rate(local, badcases_only=False)
    per_cluster = {k: v for k, v in binding_rates(local, True).items() if k is not None}
    return AssociationResult(bound=total.bound, total=total.total, rate=total.rate,
                             per_level=dict(total.per_level), ambiguous=amb,
                             per_cluster=per_cluster, tolerances=tol)
