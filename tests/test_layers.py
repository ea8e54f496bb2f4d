"""The layers (pyproject.toml [tool.importlinter]): the core imports no Qt; the stack (entry
points, the Qt side and the report renderer, the core) and the core (report, replay, analysis,
store and formats, the base) are "layers" contracts; the report renderer and the panels import
neither the app nor the main window; no import cycles. lint-imports (import-linter, the test
extra) checks every import, including those inside functions; the core's only imports by string
are its own format readers. The package installs one name, explorer: widgets/, queries/ and
resources/ are explorer.widgets, ... by the package mapping (no links), nothing imports the bare
names, and they cannot be imported from an install."""
import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _setuptools_conf() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _package_folder(package: str, mapping: dict[str, str]) -> Path:
    """Where setuptools takes a package from: the longest mapped prefix (package-dir)."""
    parts = package.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in mapping:
            return ROOT / mapping[".".join(parts[:i])] / Path(*parts[i:])
    raise AssertionError(f"{package} has no folder in package-dir")


def installed_layout(dest: Path) -> Path:
    """The package's .py files laid out as a wheel installs them (explorer/widgets/...), from
    pyproject's packages and package-dir: import-linter (grimp) finds modules by walking the
    package's folder, and in a checkout widgets/ is beside explorer/, not inside it."""
    conf = _setuptools_conf()
    for package in conf["packages"]:
        src, out = _package_folder(package, conf["package-dir"]), dest / Path(*package.split("."))
        out.mkdir(parents=True, exist_ok=True)
        for f in src.glob("*.py"):
            shutil.copyfile(f, out / f.name)
    return dest


def test_import_linter_contracts_are_kept(tmp_path):
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    site = installed_layout(tmp_path / "site")
    env = dict(os.environ, PYTHONPATH=str(site))  # ahead of any install of the package
    out = subprocess.run([exe, "--no-cache", "--config", str(ROOT / "pyproject.toml")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "4 kept, 0 broken" in out.stdout
    assert "explorer.widgets.panels" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


_CYCLES = """import json, sys, tomllib
import grimp, networkx as nx
g = grimp.build_graph("explorer", cache_dir=None)
conf = tomllib.load(open(sys.argv[1], "rb"))["tool"]["importlinter"]["contracts"]
ignored = {tuple(s.strip() for s in i.split("->")) for c in conf for i in c.get("ignore_imports", [])}
G = nx.DiGraph((m, i) for m in g.modules for i in g.find_modules_directly_imported_by(m)
               if i.startswith("explorer.") and (m, i) not in ignored)
print(json.dumps(sorted(sorted(c) for c in nx.strongly_connected_components(G) if len(c) > 1)))
"""


def test_no_import_cycles(tmp_path):
    """The layers contracts allow siblings of one layer (":") to import each other and say
    nothing inside a layer (analysis/): no module of the package, as installed, reaches itself
    through its imports (those inside functions included). No contract ignores an import any
    more (the section registry, core/sections.py, sits above what its builders read)."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert not [c["name"] for c in conf["tool"]["importlinter"]["contracts"]
                if c.get("ignore_imports")]
    pytest.importorskip("grimp")
    site = installed_layout(tmp_path / "site")
    out = subprocess.run([sys.executable, "-c", _CYCLES, str(ROOT / "pyproject.toml")],
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(site)),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout) == []


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
    resources/ are explorer.widgets, explorer.queries and explorer.resources (pyproject.toml
    package-dir; no links in explorer/). An import of the bare name would load a second copy of
    a module in a checkout (two classes, two caches) and fail in an installed wheel."""
    for name in MOVED:
        assert not os.path.lexists(ROOT / "explorer" / name), name
    files = [p for d in SOURCE_FOLDERS for p in sorted((ROOT / d).rglob("*.py"))]
    assert len(files) > 200
    hits = [(p.relative_to(ROOT).as_posix(), line, name) for p in files
            for line, name in _old_names(ast.parse(p.read_text(encoding="utf-8")))]
    assert hits == []


def test_the_package_installs_one_top_level_name():
    """What setuptools puts in the wheel (pyproject.toml [tool.setuptools]): every package under
    explorer/ and the mapped widgets/ (with painters/), queries/ and resources/, and no other
    top-level name; the SQL files and resources ride along as package data."""
    conf = _setuptools_conf()
    on_disk = {".".join(Path(d).relative_to(ROOT).parts)
               for d, _, names in os.walk(ROOT / "explorer") if "__init__.py" in names}
    for name in MOVED:
        on_disk |= {".".join(("explorer",) + Path(d).relative_to(ROOT).parts)
                    for d, _, names in os.walk(ROOT / name) if "__init__.py" in names}
    assert set(conf["packages"]) == on_disk
    assert {"explorer.widgets", "explorer.widgets.painters", "explorer.queries",
            "explorer.resources"} <= on_disk
    assert {name.split(".")[0] for name in conf["packages"]} == {"explorer"}
    assert conf["package-dir"] == {"explorer": "explorer", **{f"explorer.{n}": n for n in MOVED}}
    assert set(conf["package-data"]) == {"explorer.queries", "explorer.resources"}


_PROBE = """import importlib, sys
import explorer.widgets.painters, explorer.queries, explorer.resources
from importlib import resources
print(explorer.widgets.painters.__file__, explorer.queries.__file__)
print(resources.files("explorer.queries").joinpath("runs_itls.sql").is_file(),
      resources.files("explorer.resources").joinpath("style.qss").is_file())
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
        print("imported", name)
    except ImportError:
        pass
"""


def _probe(python: str, cwd: Path, env: dict, names: tuple[str, ...]) -> list[str]:
    out = subprocess.run([python, "-c", _PROBE, *names], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_a_checkout_on_the_path_maps_its_own_folders(tmp_path):
    """PYTHONPATH=<checkout>, from any folder, whatever else is installed: explorer.widgets,
    .queries and .resources are this checkout's folders (explorer/__init__.py's finder) and the
    bare names fail (their __init__ refuses any other name)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    lines = _probe(sys.executable, tmp_path, env, MOVED)
    assert lines == [f"{ROOT / 'widgets' / 'painters' / '__init__.py'} "
                     f"{ROOT / 'queries' / '__init__.py'}", "True True"]


def test_an_editable_install_imports_explorer_only(tmp_path):
    """pip install -e: setuptools' meta-path finder maps the four folders; the checkout is not
    on sys.path, so widgets, queries, resources and tests cannot be imported from any folder."""
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} < 77 (the build's floor): "
                    "pip install -e '.[test]'")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = str(venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # this interpreter's libraries (setuptools for the build), as a path, not as a site folder:
    # its own .pth files (an install of the package there) are not run
    here = [p for p in sys.path if p.endswith("site-packages")]
    Path(site, "zz_libraries.pth").write_text("\n".join(here) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q",
                          "--no-deps", "--no-build-isolation", "--no-index", "-e", str(ROOT)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    lines = _probe(python, tmp_path, env, MOVED + ("tests",))
    assert lines == [f"{ROOT / 'widgets' / 'painters' / '__init__.py'} "
                     f"{ROOT / 'queries' / '__init__.py'}", "True True"]
