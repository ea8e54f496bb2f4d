"""What legitimately differs between two builds of the same report: the wall-clock timings
(meta: generated_at and the engine's seconds; the replay section's seconds used of its budget).
Tests comparing two report documents compare them without these."""
import copy


def without_timings(doc: dict) -> dict:
    """A copy of the report document without its timings (the input is left as it is)."""
    out = copy.deepcopy(doc)
    meta = out.get("meta")
    if isinstance(meta, dict):
        meta.pop("generated_at", None)
        if isinstance(meta.get("engine"), dict):
            meta["engine"].pop("seconds", None)
    budget = (out.get("replay") or {}).get("budget")
    if isinstance(budget, dict):
        budget.pop("elapsed_s", None)
    return out
