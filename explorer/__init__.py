"""Trace Explorer: bind LLM eval badcases to inference-engine traces and explain them.

One installed name: the repository's top-level widgets/, queries/ and resources/ are
explorer.widgets, explorer.queries and explorer.resources. A wheel or an editable install gets
them from setuptools' package mapping (pyproject.toml [tool.setuptools] package-dir); a plain
checkout on sys.path (PYTHONPATH=<checkout>) gets them from the finder below, which maps the three
names to the folders beside this one and so always imports this checkout's copy, ahead of any
editable install of another checkout (docs/architecture.md, "One physical package")."""
import sys
from importlib.machinery import PathFinder
from pathlib import Path

__version__ = "0.1.0"

_MAPPED = ("widgets", "queries", "resources")  # explorer.<name> is <checkout>/<name>
_ROOT = Path(__file__).resolve().parent.parent


class _CheckoutFinder:
    """Meta-path finder for explorer.widgets / .queries / .resources in a source checkout only
    (their subpackages then follow from the package's __path__ as usual)."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        parent, _, name = fullname.rpartition(".")
        if parent != __name__ or name not in _MAPPED:
            return None
        return PathFinder.find_spec(fullname, [str(_ROOT)])


def _is_checkout() -> bool:
    # installed (wheel): the three are real subfolders of explorer/ and no finder is needed
    return (_ROOT / "pyproject.toml").is_file() and all(
        (_ROOT / n / "__init__.py").is_file() and not (_ROOT / "explorer" / n).exists()
        for n in _MAPPED)


if _is_checkout() and not any(isinstance(f, _CheckoutFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _CheckoutFinder())
