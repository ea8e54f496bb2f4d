"""The layers (pyproject.toml [tool.importlinter]): the core imports no Qt and nothing above it,
the report renderer and the panels import neither the app nor the main window. lint-imports
(import-linter, the test extra) checks every import, including those inside functions; the
core's only imports by string are its own format readers."""
import ast
import shutil
import subprocess
import sys
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
