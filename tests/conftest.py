"""Shared fixtures. Real public data is read in place from ../shared/data/real (never copied)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MPLCONFIGDIR", str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "mpl"))

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT.parent / "shared" / "data" / "real"


@pytest.fixture(scope="session")
def real() -> Path:
    """The folder of real public files (../shared/data/real); the tests need it."""
    assert REAL.is_dir(), f"real test data missing: {REAL} (CI lays ../shared beside the clone)"
    return REAL


@pytest.fixture
def store():
    """A fresh in-memory store."""
    from explorer.core.store import Store
    s = Store()
    yield s
    s.close()
