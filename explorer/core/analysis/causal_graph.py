"""The causal graph of the what-if analysis: parsing, validation and the bundled default.

A graph is text in DOT (a `digraph { a -> b; }` subset) or GML (`graph [ directed 1 node [...]
edge [...] ]`, read with networkx.parse_gml). Nodes are metric names; a node with the attribute
`latent=true` (or `observed=false`) is a cause that is not measured. Validation: directed,
acyclic, no self-loop, every name a known metric (schema.REQUEST_METRICS, `badcase`, `sla_met`,
any column of the frame the graph is used with) or marked latent. Errors are InputError naming
the source and the line, e.g. "<causal graph>:12: field 'kv_cach_hit_rate': unknown node ...".

The DOT grammar followed is Graphviz's (https://graphviz.org/doc/info/lang.html) restricted to
what a causal graph needs: node and edge statements with attribute lists, edge chains
(a -> b -> c), graph attributes (rankdir=LR), `node [...]`/`edge [...]` defaults, comments
(//, #, /* */) and quoted IDs. Subgraphs and undirected edges are rejected with a message.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from importlib import resources

from ..errors import InputError
from ..schema import REQUEST_METRICS

#: Outcome nodes known beside the request metrics: the eval's badcase flag (0/1) and whether
#: the request met every SLA threshold (0/1).
OUTCOME_NODES = ("badcase", "sla_met")
KNOWN_NODES = frozenset(REQUEST_METRICS) | frozenset(OUTCOME_NODES)
DEFAULT_SOURCE = "<causal graph>"

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


@dataclass(frozen=True)
class CausalGraph:
    """A validated causal DAG.

    nodes: names in order of first appearance; edges: (cause, effect) pairs; latent: nodes
    marked unobserved in the text; text: the source text (kept with the session as is).
    """
    nodes: tuple[str, ...]
    edges: tuple[tuple[str, str], ...]
    latent: frozenset[str]
    text: str

    def to_networkx(self):
        """networkx.DiGraph of the graph (nodes carry `latent` True/False)."""
        import networkx as nx
        g = nx.DiGraph()
        for n in self.nodes:
            g.add_node(n, latent=n in self.latent)
        g.add_edges_from(self.edges)
        return g

    def unobserved(self, columns) -> list[str]:
        """Nodes that are latent or not among `columns` (sorted)."""
        cols = set(columns)
        return sorted(n for n in self.nodes if n in self.latent or n not in cols)


def default_graph_text() -> str:
    """Text of the bundled default graph, resources/causal_graph.dot (DOT, commented edges)."""
    graph = resources.files("explorer.resources").joinpath("causal_graph.dot")
    return graph.read_text(encoding="utf-8")


def default_graph() -> CausalGraph:
    """The bundled default graph, parsed and validated."""
    return parse_graph(default_graph_text(), source="resources/causal_graph.dot")


# ---- DOT tokenizer / parser ---------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+) | (?P<nl>\n)
  | (?P<lcomment>//[^\n]*|\#[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<arrow>->|--)
  | (?P<id>[A-Za-z_\u0080-\uffff][A-Za-z0-9_.\u0080-\uffff]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))
  | (?P<punct>[{}\[\];,=:])
""", re.VERBOSE | re.DOTALL)


def _tokens(text: str, source: str):
    line = 1
    pos = 0
    out = []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            snippet = text[pos:pos + 20].split("\n")[0]
            raise InputError(source, f"cannot read {snippet!r} (not DOT syntax)", line=line)
        kind = m.lastgroup
        val = m.group()
        if kind == "string":
            out.append(("id", re.sub(r'\\(.)', r'\1', val[1:-1]), line))
        elif kind in ("arrow", "id", "punct"):
            out.append((kind, val, line))
        line += val.count("\n")
        pos = m.end()
    out.append(("eof", "", line))
    return out


class _DotParser:
    def __init__(self, text: str, source: str):
        self.toks = _tokens(text, source)
        self.i = 0
        self.source = source
        self.nodes: dict[str, int] = {}        # name -> line of first appearance
        self.edges: dict[tuple[str, str], int] = {}
        self.latent: set[str] = set()

    def peek(self, k: int = 0):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def fail(self, msg: str, line: int | None = None, field: str | None = None):
        raise InputError(self.source, msg, line=line if line is not None else self.peek()[2],
                         field=field)

    def expect(self, kind: str, val: str | None = None):
        t = self.take()
        if t[0] != kind or (val is not None and t[1] != val):
            want = repr(val) if val else ("a name" if kind == "id" else kind)
            got = repr(t[1]) if t[0] != "eof" else "the end of the text"
            self.fail(f"expected {want}, found {got}", t[2])
        return t

    def parse(self):
        t = self.take()
        if t[0] == "id" and t[1].lower() == "strict":
            t = self.take()
        if t[0] != "id" or t[1].lower() not in ("digraph", "graph"):
            self.fail("a causal graph starts with 'digraph NAME {'", t[2])
        if t[1].lower() == "graph":
            self.fail("the graph must be directed: write 'digraph', with '->' edges", t[2])
        if self.peek()[0] == "id":
            self.take()
        self.expect("punct", "{")
        while not (self.peek()[0] == "punct" and self.peek()[1] == "}"):
            if self.peek()[0] == "eof":
                self.fail("missing '}' at the end of the graph")
            self.statement()
        self.take()
        if self.peek()[0] != "eof":
            self.fail(f"unexpected {self.peek()[1]!r} after the closing '}}'")

    def attrs(self) -> dict[str, tuple[str, int]]:
        out: dict[str, tuple[str, int]] = {}
        while self.peek()[0] == "punct" and self.peek()[1] == "[":
            self.take()
            while not (self.peek()[0] == "punct" and self.peek()[1] == "]"):
                key = self.expect("id")
                val = ("true", key[2])
                if self.peek()[1] == "=":
                    self.take()
                    v = self.expect("id")
                    val = (v[1], v[2])
                out[key[1]] = val
                if self.peek()[0] == "punct" and self.peek()[1] in ",;":
                    self.take()
                if self.peek()[0] == "eof":
                    self.fail("missing ']' after the attributes")
            self.take()
        return out

    def statement(self):
        t = self.peek()
        if t[0] == "punct" and t[1] == ";":
            self.take()
            return
        if t[0] == "punct" and t[1] == "{" or t[0] == "id" and t[1].lower() == "subgraph":
            self.fail("subgraphs are not supported in a causal graph; list the edges one by one")
        if t[0] != "id":
            self.fail(f"expected a node name, found {t[1]!r}")
        if t[1].lower() in ("node", "edge", "graph") and self.peek(1)[1] == "[":
            self.take()
            self.attrs()
            return
        if self.peek(1)[0] == "punct" and self.peek(1)[1] == "=":   # graph attribute a=b
            self.take()
            self.take()
            self.expect("id")
            return
        chain = [self.node_id()]
        while self.peek()[0] == "arrow":
            arrow = self.take()
            if arrow[1] == "--":
                self.fail("undirected edge '--': a causal graph needs '->'", arrow[2])
            if self.peek()[0] == "punct" and self.peek()[1] == "{":
                self.fail("subgraphs are not supported in a causal graph; list the edges one by one")
            chain.append(self.node_id())
        at = self.attrs()
        if len(chain) == 1:
            name, line = chain[0]
            for key in ("latent", "observed"):
                if key in at:
                    v, vline = at[key]
                    v = v.lower()
                    if v not in _TRUE | _FALSE:
                        self.fail(f"{key}={v!r}: use true or false", vline, field=name)
                    if (key == "latent") == (v in _TRUE):
                        self.latent.add(name)
                    else:
                        self.latent.discard(name)
        for (a, la), (b, _) in zip(chain, chain[1:]):
            if a == b:
                self.fail(f"self-loop {a} -> {a}: a variable cannot cause itself", la, field=a)
            self.edges.setdefault((a, b), la)
        if self.peek()[0] == "punct" and self.peek()[1] == ";":
            self.take()

    def node_id(self) -> tuple[str, int]:
        t = self.expect("id")
        if self.peek()[0] == "punct" and self.peek()[1] == ":":   # port: a:n -> b
            self.take()
            self.expect("id")
        self.nodes.setdefault(t[1], t[2])
        return t[1], t[2]


def _parse_gml(text: str, source: str):
    import networkx as nx
    try:
        g = nx.parse_gml(text, label="label")
    except Exception:
        try:
            g = nx.parse_gml(text, label="id")
        except Exception as exc:  # networkx says what and where ("... at line 3")
            m = re.search(r"line (\d+)", str(exc))
            raise InputError(source, f"not a readable GML graph: {exc}",
                             line=int(m.group(1)) if m else None) from None
    if not g.is_directed():
        raise InputError(source, "the graph must be directed: add 'directed 1' to the GML graph")
    lines = {}
    for i, ln in enumerate(text.splitlines(), 1):
        for m in re.finditer(r'label\s+"([^"]*)"', ln):
            lines.setdefault(m.group(1), i)
    nodes = {str(n): lines.get(str(n)) for n in g.nodes}
    edges = {}
    for a, b in g.edges():
        if a == b:
            raise InputError(source, f"self-loop {a} -> {a}: a variable cannot cause itself",
                             line=lines.get(str(a)), field=str(a))
        edges[(str(a), str(b))] = lines.get(str(a))
    latent = set()
    for n, data in g.nodes(data=True):
        lat = str(data.get("latent", "")).lower()
        obs = str(data.get("observed", "")).lower()
        if lat in _TRUE or obs in _FALSE:
            latent.add(str(n))
    return nodes, edges, latent


def is_gml(text: str) -> bool:
    """True when the text looks like GML (first statement `graph [`), not DOT."""
    body = re.sub(r"^\s*(#[^\n]*\n\s*)*", "", text)
    return re.match(r"(?i)graph\s*\[", body) is not None


def parse_graph(text: str, source: str = DEFAULT_SOURCE, known=None) -> CausalGraph:
    """Parse and validate a causal graph given as DOT or GML text.

    known: extra node names accepted beside KNOWN_NODES (e.g. the frame's columns).
    Returns a CausalGraph. Raises InputError(source, message, line, field) when the text is
    not DOT/GML, the graph is undirected, has a self-loop or a cycle (the message lists it), or
    a node is neither known nor marked latent (the message suggests the closest known name).
    """
    if not text or not text.strip():
        raise InputError(source, "the causal graph is empty")
    if is_gml(text):
        nodes, edges, latent = _parse_gml(text, source)
    else:
        p = _DotParser(text, source)
        p.parse()
        nodes, edges, latent = p.nodes, p.edges, p.latent
    accepted = KNOWN_NODES | frozenset(() if known is None else known)
    for name, line in nodes.items():
        if name not in accepted and name not in latent:
            close = difflib.get_close_matches(name, sorted(accepted), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise InputError(source, f"unknown node '{name}'{hint}: use a metric name or mark "
                             f"it [latent=true]", line=line, field=name)
    if not edges:
        raise InputError(source, "the causal graph has no edges")
    import networkx as nx
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        cycle = None
    if cycle:
        names = " -> ".join([a for a, _ in cycle] + [cycle[0][0]])
        last = cycle[-1]
        raise InputError(source, f"the graph has a cycle: {names}; a causal graph must be acyclic",
                         line=edges.get((last[0], last[1])))
    return CausalGraph(nodes=tuple(nodes), edges=tuple(edges), latent=frozenset(latent),
                       text=text)
