"""What runs after every load: default clusters, then binding cases to requests."""
from __future__ import annotations

from .association import AssociationResult, Tolerances, bind_cases
from .clusters import assign_default_clusters


def prepare(store, tol: Tolerances | None = None) -> AssociationResult:
    """Fill missing badcase clusters (category, renames re-applied) and rebind every case
    (case_links rewritten). tol = None uses the tolerances saved with the session (else the
    defaults). Idempotent: call it after every load. A warehouse store (explorer.core.warehouse)
    does both with the requests in its engine."""
    if getattr(store, "remote", False):
        return store.prepare(tol)
    assign_default_clusters(store)
    result = bind_cases(store, tol)
    store.compact()  # case_links written
    return result
