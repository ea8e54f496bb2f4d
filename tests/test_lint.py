"""ruff over the tree and mypy over the core, with pyproject.toml's [tool.ruff] / [tool.mypy]
(the test extra installs both): `make test` fails on an unused import, an undefined name, a
loop variable that hides the translation function _(), a missing module of ours."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    exe = shutil.which(name) or str(Path(sys.executable).with_name(name))
    if not Path(exe).exists():
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return exe


def test_ruff_finds_nothing():
    out = subprocess.run([_tool("ruff"), "check", "--no-cache", "--output-format", "concise",
                          "."], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_mypy_passes_on_the_core():
    # its incremental cache, .mypy_cache/ (ignored by git): ~40 s cold on 2 cores, seconds after
    out = subprocess.run([_tool("mypy")], cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "Success: no issues found" in out.stdout
