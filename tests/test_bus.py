"""The results bus (explorer/core/bus.py): keyed by topics of the section registry, never by a
free string; the widgets and the report renderer read it only so."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from explorer.core import bus, sections
from explorer.core.analysis.results import SectionError

ROOT = Path(__file__).resolve().parents[1]
READERS = ("get", "view", "ok")


def test_one_topic_per_section_of_the_registry_and_no_view_named_like_one():
    assert list(bus.SECTION) == [s.key for s in sections.SECTIONS]
    assert all(bus.SECTION[s.key].section is s for s in sections.SECTIONS)
    assert not set(bus.VIEWS) & set(bus.SECTION)
    with pytest.raises(KeyError):
        bus.topic("no such section")


def test_an_update_refuses_string_keys():
    u = bus.Update.of({"tree": {"nodes": []}, "frame": None})
    tree = bus.SECTION["tree"]
    assert isinstance(u[tree], bus.Published) and u[tree].section is sections.BY_KEY["tree"]
    assert u.view(tree) == {"nodes": []} and bus.FRAME in u and u[bus.FRAME] is None
    for read in (lambda: u["tree"], lambda: "tree" in u, lambda: u.get("tree"),
                 lambda: u.view("tree")):
        with pytest.raises(TypeError, match="keyed by explorer.core.bus topics"):
            read()
    with pytest.raises(KeyError):  # a producer's name that is neither a section nor a view
        bus.Update.of({"no_such_key": 1})


def test_a_section_carries_its_result_object_or_a_failure():
    class Result:  # a frozen result's interface: to_dict() is its report-JSON section
        def to_dict(self):
            return {"k": 1}
    obj = Result()
    u = bus.Update.of({"cohort": obj.to_dict()}, {"cohort": obj})
    assert u[bus.SECTION["cohort"]].result is obj and u.view(bus.SECTION["cohort"]) == {"k": 1}
    from explorer.core.windowdata import to_payload
    fail = to_payload(SectionError("tree", "too few cases", "no_data"))
    u = bus.Update.of({"tree": fail})
    assert u[bus.SECTION["tree"]] == bus.Failure("too few cases", nodata=True)
    assert u.ok(bus.SECTION["tree"]) is None and u.view(bus.SECTION["tree"]) is fail
    merged = bus.Update.of({"tree": {"a": 1}}).merged(bus.Update.of({"frame": 0}))
    assert merged.names() == {"tree": {"a": 1}, "frame": 0}


def _is_session(node: ast.AST) -> bool:
    """`session`, `self.session`, `s.session` ...: an expression naming the Session."""
    return (isinstance(node, ast.Name) and node.id == "session") or \
        (isinstance(node, ast.Attribute) and node.attr == "session")


def _str(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def bus_reads_by_string(root: Path) -> list[str]:
    """Places in widgets/ and explorer/reporting/ under `root` that read the results bus by a
    string: Session.data (the name-keyed dict it was), getattr(session, "data"), and on an
    update (a parameter named update or annotated Update) or on Session.results: [str],
    .get/.view/.ok(str), str in ..."""
    out = []
    files = sorted((root / "widgets").rglob("*.py")) + sorted((root / "explorer" / "reporting").rglob("*.py"))
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        updates: set[str] = set()
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for a in fn.args.args + fn.args.kwonlyargs:
                    ann = ast.unparse(a.annotation) if a.annotation is not None else ""
                    if a.arg == "update" or "Update" in ann:
                        updates.add(a.arg)

        def is_bus(node: ast.AST) -> bool:
            return (isinstance(node, ast.Name) and node.id in updates) or \
                (isinstance(node, ast.Attribute) and node.attr == "results")

        for node in ast.walk(tree):
            bad = None
            if isinstance(node, ast.Attribute) and node.attr == "data" and _is_session(node.value):
                bad = "Session.data"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2 \
                    and _str(node.args[1]) and node.args[1].value == "data":
                bad = f"{node.func.id}(..., 'data')"
            elif isinstance(node, ast.Subscript) and is_bus(node.value) and _str(node.slice):
                bad = "[str]"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in READERS and is_bus(node.func.value) \
                    and node.args and _str(node.args[0]):
                bad = f".{node.func.attr}(str)"
            elif isinstance(node, ast.Compare) and _str(node.left) and \
                    isinstance(node.ops[0], (ast.In, ast.NotIn)) and is_bus(node.comparators[0]):
                bad = "str in"
            if bad:
                out.append(f"{path.relative_to(root)}:{node.lineno}: {bad}: {ast.unparse(node)[:80]}")
    return out


def test_no_widget_reads_the_bus_by_a_string_key():
    """The panels, the main window and the report renderer read the bus by topic
    (bus.SECTION[key], bus.FRAME, ...); on main before the typed bus this listed 44 places."""
    found = bus_reads_by_string(ROOT)
    assert not found, "read the bus by topic (explorer.core.bus):\n" + "\n".join(found)


def store_reaches(root: Path) -> list[str]:
    """Places in widgets/ that reach the Session's store or its worker themselves
    (session.store, session.runner.submit) instead of Session.store_job with a view-state query."""
    out = []
    for path in sorted((root / "widgets").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "store" and _is_session(node.value):
                out.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
            elif isinstance(node, ast.Attribute) and node.attr == "submit" and \
                    isinstance(node.value, ast.Attribute) and node.value.attr == "runner" and \
                    _is_session(node.value.value):
                out.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_panel_reaches_the_store():
    """On main before this change: 16 places (Compare, Timeline, What-if, Replay)."""
    found = store_reaches(ROOT)
    assert not found, "use Session.store_job(key, <viewstate query>, ...):\n" + "\n".join(found)
