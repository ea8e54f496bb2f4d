"""Sweeps: runs that differ in one numeric setting (request rate, concurrency, max_num_seqs,
any numeric key of runs.config) and in nothing else (dataset, model, lengths, engine, version,
the other settings), drawn as a curve of each metric against that setting, and the Pareto front
of throughput against latency (a point is on the front when no other point of the sweep has
both a higher output throughput and a lower latency).
"""
from __future__ import annotations

import json

from .pairs import BETTER

SWEEP_KEYS = ("request_rate", "concurrency")
PARETO = (("output_throughput", "value"), ("e2e_ms", "median"))
MIN_POINTS = 3


def _key_without(r: dict, part: str) -> str:
    w = dict(r["workload"])
    src = w.pop("source", {})
    if part in SWEEP_KEYS:
        w.pop(part, None)
    for k in ("input_len", "output_len"):  # lengths from requests compared to 2 digits
        if w.get(k) is not None and src.get(k) == "requests":
            w[k] = float(f"{w[k]:.2g}")
    s = {k: v for k, v in r["setting"].items() if k != part}
    return json.dumps([w, s, r["engine"], r["engine_version"]], sort_keys=True, default=str)


def _x(r: dict, part: str):
    v = r["workload"].get(part) if part in SWEEP_KEYS else r["setting"].get(part)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _name(r: dict, part: str) -> str:
    bits = [x for x in (r["engine"], r["engine_version"]) if x]
    bits += [f"{k}={v}" for k, v in r["setting"].items() if k != part]
    return " ".join(str(b) for b in bits) or (r["workload"].get("dataset") or r["run_id"])


def find_sweeps(runs: list[dict]) -> list[dict]:
    """[{setting, name, points: [{run_id, label, x, values: {metric stat: value}}],
    pareto: {x_metric, y_metric, front: [run_id]}}] with at least MIN_POINTS distinct x."""
    parts = list(SWEEP_KEYS) + sorted({k for r in runs for k, v in r["setting"].items()
                                       if isinstance(v, (int, float)) and not isinstance(v, bool)})
    out, used = [], set()
    for part in parts:
        groups: dict[str, list[dict]] = {}
        for r in runs:
            if _x(r, part) is not None:
                groups.setdefault(_key_without(r, part), []).append(r)
        for members in groups.values():
            xs = {_x(r, part) for r in members}
            ids = frozenset(r["run_id"] for r in members)
            if len(xs) < MIN_POINTS or ids in used:
                continue
            used.add(ids)
            members = sorted(members, key=lambda r: _x(r, part))
            points = [{"run_id": r["run_id"], "label": r["label"], "x": float(_x(r, part)),
                       "values": {f"{m} {s}": v for (m, s), v in r["values"].items()
                                  if m in BETTER}} for r in members]
            out.append({"setting": part, "name": _name(members[0], part), "points": points,
                        "pareto": pareto(points)})
    return out


def pareto(points: list[dict]) -> dict:
    (xm, xs), (ym, ys) = PARETO
    xk, yk = f"{xm} {xs}", f"{ym} {ys}"
    pts = [(p["run_id"], p["values"].get(xk), p["values"].get(yk)) for p in points]
    pts = [p for p in pts if p[1] is not None and p[2] is not None]
    front = [rid for rid, t, lat in pts
             if not any(t2 >= t and l2 <= lat and (t2 > t or l2 < lat) for _, t2, l2 in pts)]
    return {"x_metric": xk, "y_metric": yk, "front": front}
