"""The layers (pyproject.toml [tool.importlinter]): the core imports no Qt and nothing above it,
the report renderer and the panels import neither the app nor the main window. lint-imports
(import-linter, the test extra) checks every import, including those inside functions; the
core's only imports by string are its own format readers. The package installs one name,
explorer: widgets/, queries/ and resources/ are explorer.widgets, ... and nothing imports the
bare names."""
import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_are_kept():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    out = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "3 kept, 0 broken" in out.stdout


def test_core_imports_by_string_only_its_own_format_readers():
    """import-linter cannot see importlib.import_module("explorer.reporting"): no such call in
    the core but the format registry's, which imports explorer.core.formats' own modules."""
    calls = []
    for p in sorted((ROOT / "explorer" / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in ("import_module", "__import__"):
                    calls.append((p.relative_to(ROOT).as_posix(), ast.unparse(node)))
    assert calls == [("explorer/core/formats/__init__.py",
                      "importlib.import_module(f'{__name__}.{info.name}')")]


SOURCE_FOLDERS = ("explorer", "widgets", "queries", "resources", "tests", "bench", "scripts")
MOVED = ("widgets", "queries", "resources")  # installed as explorer.widgets, ... (pyproject.toml)


def _old_names(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) where tree imports widgets / queries / resources as top-level names: import
    statements, a string given to importlib (files, import_module) or to monkeypatch / mock,
    and Python source held in a string (the code a test runs in a child)."""
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            f = node.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) in (
                    "files", "import_module", "__import__", "setattr", "patch", "find_spec"):
                names = [node.args[0].value] if isinstance(node.args[0].value, str) else []
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and "import" in node.value):
            try:
                code = ast.parse(node.value)
            except SyntaxError:  # prose
                continue
            names = [n for _, n in _old_names(code)]
        found += [(getattr(node, "lineno", 0), n) for n in names if n.split(".")[0] in MOVED]
    return found


def test_widgets_queries_resources_are_imported_under_explorer_only():
    """The package installs one top-level name: the repository's widgets/, queries/ and
    resources/ are explorer.widgets, explorer.queries and explorer.resources (links in
    explorer/). An import of the bare name would load a second copy of a module in a checkout
    (two classes, two caches) and fail in an installed wheel."""
    for name in MOVED:
        link = ROOT / "explorer" / name
        assert link.is_symlink() and link.resolve() == (ROOT / name).resolve(), link
    files = [p for d in SOURCE_FOLDERS for p in sorted((ROOT / d).rglob("*.py"))]
    assert len(files) > 200
    hits = [(p.relative_to(ROOT).as_posix(), line, name) for p in files
            for line, name in _old_names(ast.parse(p.read_text(encoding="utf-8")))]
    assert hits == []


def test_the_package_installs_one_top_level_name():
    """What setuptools puts in the wheel (pyproject.toml [tool.setuptools]): every package under
    explorer/, the linked widgets/ (with painters/), queries/ and resources/ included, and no
    other top-level name; the SQL files and resources ride along as package data."""
    setuptools = pytest.importorskip("setuptools")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    conf = pyproject["tool"]["setuptools"]
    include = conf["packages"]["find"]["include"]
    found = set(setuptools.find_packages(where=str(ROOT), include=include))
    on_disk = {".".join(Path(d).relative_to(ROOT).parts)
               for d, _, names in os.walk(ROOT / "explorer", followlinks=True)
               if "__init__.py" in names}
    assert found == on_disk
    assert {"explorer.widgets", "explorer.widgets.painters", "explorer.queries",
            "explorer.resources"} <= found
    assert {name.split(".")[0] for name in found} == {"explorer"}
    assert set(conf["package-data"]) == {"explorer.queries", "explorer.resources"}
