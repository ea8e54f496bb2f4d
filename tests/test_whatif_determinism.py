"""run_whatif gives the same result, to the last digit, for the same frame content and seed:
in two fresh processes whose string hash seeds differ (DoWhy hands back the backdoor
adjustment set in the order of a Python set of str, which follows PYTHONHASHSEED; that order
used to set the design matrix's column order and so every digit of the fit and of the
bootstrap interval), and for the frame's rows in another order (sorted by case_id inside).

Small frame (600 rows, three confounders), refuters on with 3 simulations each."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd

from explorer.core.analysis import whatif as W

GRAPH = """digraph {
  batch_size -> kv_cache_hit_rate; batch_size -> badcase;
  prompt_tokens -> kv_cache_hit_rate; prompt_tokens -> badcase;
  queue_ms -> kv_cache_hit_rate; queue_ms -> badcase;
  kv_cache_hit_rate -> badcase;
}"""


def frame(n=600, seed=5):
    """SCM: batch_size ~ Gamma(4, 8), prompt_tokens ~ LogNormal(6, 0.8), queue_ms ~ Exp(50);
    kv_cache_hit_rate = clip(0.9 - 0.01 batch - 0.0001 prompt - 0.001 queue + N(0, 0.15), 0, 1);
    badcase = 1[U < sigmoid(-0.5 - 3 (kv - 0.5) + 0.03 (batch - 32) + 0.005 (queue - 50))]."""
    r = np.random.default_rng(seed)
    bs, pt, q = r.gamma(4, 8, n), r.lognormal(6, 0.8, n), r.exponential(50, n)
    kv = np.clip(0.9 - 0.01 * bs - 0.0001 * pt - 0.001 * q + r.normal(0, 0.15, n), 0, 1)
    p = 1 / (1 + np.exp(-(-0.5 - 3 * (kv - 0.5) + 0.03 * (bs - 32) + 0.005 * (q - 50))))
    y = (r.uniform(size=n) < p).astype(int)
    return pd.DataFrame({"case_id": [f"e:{i:05d}" for i in range(n)],
                         "grp": np.where(y == 1, "bad", "control"), "badcase": y,
                         "kv_cache_hit_rate": kv, "batch_size": bs, "prompt_tokens": pt,
                         "queue_ms": q})


def _run(frame_path, hash_seed: int) -> tuple[str, list[str]]:
    """to_dict() JSON of run_whatif in a fresh interpreter with PYTHONHASHSEED=hash_seed, and the
    adjustment set in the order DoWhy gave it there."""
    code = textwrap.dedent(f"""
        import json, sys
        import networkx as nx
        import pandas as pd
        from explorer.core.analysis import whatif as W
        from explorer.core.analysis.causal_graph import parse_graph
        from explorer.core.analysis.whatif.identify import backdoor_set
        f = pd.read_pickle({str(frame_path)!r})
        graph = {GRAPH!r}
        res = W.run_whatif(f, set_value=0.8, graph_text=graph, num_simulations=3)
        g = parse_graph(graph, known=f.columns)
        cols = [n for n in g.nodes if n in f.columns]
        raw = backdoor_set(g, g.to_networkx(), f[cols], "kv_cache_hit_rate", "badcase", cols)
        print(json.dumps({{"result": json.dumps(res.to_dict()), "raw": raw}}))
    """)
    env = dict(os.environ, PYTHONHASHSEED=str(hash_seed))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    d = json.loads(out.stdout.strip().splitlines()[-1])
    return d["result"], d["raw"]


def test_same_result_to_the_last_digit_in_two_fresh_processes(tmp_path):
    path = tmp_path / "frame.pkl"
    frame().to_pickle(path)
    first, raw0 = _run(path, 0)
    for hash_seed in (1, 2, 3, 4):      # a second process in which DoWhy's set order differs
        second, raw = _run(path, hash_seed)
        if raw != raw0:
            break
    assert raw != raw0, "no hash seed gave DoWhy another adjustment-set order; test is moot"
    assert second == first
    d = json.loads(first)
    assert d["common_causes"] == sorted(raw0)
    assert len(d["refutations"]) == 3 and all(r["new_effect"] is not None
                                              for r in d["refutations"])


def test_shuffled_rows_give_the_same_result():
    f = frame()
    a = W.run_whatif(f, set_value=0.8, graph_text=GRAPH, num_simulations=3).to_dict()
    shuffled = f.sample(frac=1.0, random_state=7)
    b = W.run_whatif(shuffled, set_value=0.8, graph_text=GRAPH, num_simulations=3).to_dict()
    c = W.run_whatif(shuffled.reset_index(drop=True), set_value=0.8, graph_text=GRAPH,
                     num_simulations=3).to_dict()
    assert json.dumps(a) == json.dumps(b) == json.dumps(c)
    # a selection given as a mask follows its rows through the reordering
    sel = f["batch_size"] > f["batch_size"].median()
    d = W.run_whatif(f, set_value=0.8, graph_text=GRAPH, selected=sel, refute=False).to_dict()
    e = W.run_whatif(shuffled, set_value=0.8, graph_text=GRAPH, selected=sel.loc[shuffled.index],
                     refute=False).to_dict()
    assert json.dumps(d) == json.dumps(e) and d["n_selected"] == int(sel.sum())
