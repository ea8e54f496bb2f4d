"""The causal graph: the bundled default, the DOT/GML parser and its line-numbered errors."""
from __future__ import annotations

import re

import networkx as nx
import pytest

from explorer.core.analysis.causal_graph import (KNOWN_NODES, default_graph, default_graph_text,
                                                 parse_graph)
from explorer.core.errors import InputError
from explorer.core.schema import REQUEST_METRICS


def test_default_graph_is_a_dag_over_known_metrics_with_a_reason_per_edge():
    g = default_graph()
    assert nx.is_directed_acyclic_graph(g.to_networkx())
    assert {"kv_cache_hit_rate", "badcase", "num_preemptions", "tpot_ms", "queue_ms",
            "ttft_ms", "batch_size", "sla_met"} <= set(g.nodes)
    assert set(g.nodes) - g.latent <= KNOWN_NODES
    assert ("kv_cache_hit_rate", "badcase") in g.edges
    # every edge line carries a `//` reason, or sits in a block whose first edge has one
    text = default_graph_text()
    lines = [ln for ln in text.splitlines() if "->" in ln and not ln.strip().startswith("//")]
    assert len(lines) == len(g.edges)
    commented = sum("//" in ln for ln in lines)
    assert commented >= 0.8 * len(lines)


def test_default_graph_identifies_the_headline_effect_by_backdoor():
    """kv_cache_hit_rate -> badcase: the backdoor paths through the latent nodes are blocked by
    observed variables (the graph's parents of the hit rate), checked with networkx's d-sep."""
    g = default_graph().to_networkx()
    t, y = "kv_cache_hit_rate", "badcase"
    z = {"prompt_tokens", "batch_size"}
    assert not z & nx.descendants(g, t)
    h = g.copy()
    h.remove_edges_from(list(g.out_edges(t)))        # backdoor graph
    assert nx.is_d_separator(h, {t}, {y}, z)


def err(text, **kw):
    with pytest.raises(InputError) as e:
        parse_graph(text, source="my.dot", **kw)
    return e.value


def test_unknown_node_names_line_and_suggests():
    e = err("digraph {\n  batch_size -> kv_cache_hit_rate;\n  kv_cach_hit_rate -> badcase;\n}")
    assert e.line == 3 and e.field == "kv_cach_hit_rate" and e.path == "my.dot"
    assert "did you mean 'kv_cache_hit_rate'" in str(e)
    assert str(e).startswith("my.dot:3: field 'kv_cach_hit_rate'")


def test_cycle_is_named_with_its_line():
    e = err("digraph {\n ttft_ms -> e2e_ms;\n e2e_ms -> sla_met;\n\n sla_met -> ttft_ms;\n}")
    assert "cycle" in str(e) and e.line == 5
    assert re.search(r"ttft_ms -> e2e_ms -> sla_met -> ttft_ms", str(e))


@pytest.mark.parametrize("text, needle, line", [
    ("graph { ttft_ms -- badcase }", "must be directed", 1),
    ("digraph { ttft_ms -- badcase }", "undirected edge", 1),
    ("digraph {\n ttft_ms -> ttft_ms }", "self-loop", 2),
    ("digraph {\n ttft_ms -> \n}", "expected a name", 3),
    ("digraph { ttft_ms -> badcase", "missing '}'", 1),
    ("digraph { subgraph s { ttft_ms } }", "subgraphs are not supported", 1),
    ("digraph { ttft_ms [latent=maybe]; ttft_ms -> badcase }", "use true or false", 1),
    ("", "empty", None),
    ("digraph { ttft_ms; }", "no edges", None),
    ("nonsense", "starts with 'digraph", 1),
])
def test_bad_text_gives_a_clear_error(text, needle, line):
    e = err(text)
    assert needle in str(e) and e.line == line


def test_latent_nodes_comments_quotes_and_attributes():
    g = parse_graph('/* block\ncomment */ strict digraph "g" {\n rankdir=LR; node [shape=box];\n'
                    ' # hash comment\n "load" [latent=true, label="offered load"];\n'
                    ' load -> batch_size -> tpot_ms [color=red];\n'
                    ' x [observed=false]; x -> tpot_ms; }')
    assert g.latent == {"load", "x"}
    assert g.edges == (("load", "batch_size"), ("batch_size", "tpot_ms"), ("x", "tpot_ms"))
    assert g.unobserved(["batch_size", "tpot_ms"]) == ["load", "x"]


def test_frame_columns_are_known_names():
    err("digraph { my_metric -> badcase }")
    g = parse_graph("digraph { my_metric -> badcase }", known=["my_metric"])
    assert g.nodes == ("my_metric", "badcase")


def test_gml_is_read_too():
    g = parse_graph('graph [\n directed 1\n node [ id 0 label "kv_cache_hit_rate" ]\n'
                    ' node [ id 1 label "badcase" ]\n node [ id 2 label "load" latent "true" ]\n'
                    ' edge [ source 0 target 1 ]\n edge [ source 2 target 0 ]\n]')
    assert set(g.edges) == {("kv_cache_hit_rate", "badcase"), ("load", "kv_cache_hit_rate")}
    assert g.latent == {"load"}
    e = err('graph [\n directed 0\n node [ id 0 label "ttft_ms" ]\n]')
    assert "directed" in str(e)


def test_known_nodes_cover_the_canonical_metrics():
    assert set(REQUEST_METRICS) <= KNOWN_NODES
