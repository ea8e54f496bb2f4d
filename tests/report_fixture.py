"""A small hand-written report document (DESIGN.md report JSON shape) for rendering tests.
Its numbers are inputs to the painters, not results under test."""
import numpy as np
import pandas as pd

CLUSTER = "计算题中间步骤出错"


def sample_doc() -> dict:
    return {
        "cohort": {"cluster": CLUSTER, "category": "arithmetic", "badcases": 50,
                   "share_of_badcases": 0.4, "bound": 45, "binding_rate": 0.9,
                   "control": "same-category", "control_cases": 150, "control_bound": 140,
                   "link_levels": {"1": 170, "2": 15}},
        "comparison": [
            {"metric": "kv_cache_hit_rate", "kind": "numeric", "bad_mean": 0.25, "control_mean": 0.65,
             "diff_pct": -61.5, "p_value": 1e-9, "p_adjusted": 3e-9, "cohens_d": -1.9,
             "n_bad": 50, "n_control": 150},
            {"metric": "tpot_ms", "kind": "numeric", "bad_mean": 20.1, "control_mean": 19.9,
             "diff_pct": 1.0, "p_value": 0.6, "p_adjusted": 0.6, "cohens_d": 0.05,
             "n_bad": 50, "n_control": 150}],
        "tree": {"max_depth": 3, "baseline_error_rate": 0.25, "nodes": [
            {"id": 0, "parent": None, "feature": "kv_cache_hit_rate", "threshold": 0.35,
             "side": None, "n": 200, "error_rate": 0.25, "is_leaf": False},
            {"id": 1, "parent": 0, "feature": None, "threshold": None, "side": "le", "n": 60,
             "error_rate": 0.7, "is_leaf": True},
            {"id": 2, "parent": 0, "feature": None, "threshold": None, "side": "gt", "n": 140,
             "error_rate": 0.06, "is_leaf": True}]},
        "heatmap": {"status": "no_data", "reason": "no batch_size in these traces"},
        "versions": {"status": "no_data", "reason": "only one engine version loaded"},
        "conclusion": {"modules": ["prefix caching"], "narrative": "hit rate <b>low</b>",
                       "suggestions": [{"priority": 1, "text": "enable prefix caching",
                                        "flags": ["--enable-prefix-caching"]}]},
        "inputs": [{"path": "/data/a.json", "format": "llmperf", "sha256": "ab" * 32,
                    "rows_loaded": 3, "rows_skipped": 0}],
        "meta": {"simulated": True, "demo_note": "Simulated demo workload.",
                 "generated_at": "2026-01-01 00:00 UTC", "app_version": "test"},
    }


def sample_frame(n_bad: int = 50, n_control: int = 150) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    n = n_bad + n_control
    return pd.DataFrame({
        "case_id": [f"c{i}" for i in range(n)], "grp": ["bad"] * n_bad + ["control"] * n_control,
        "badcase": [1] * n_bad + [0] * n_control,
        "kv_cache_hit_rate": np.r_[rng.uniform(0, 0.5, n_bad), rng.uniform(0.3, 1, n_control)],
        "tpot_ms": rng.normal(20, 3, n)})
