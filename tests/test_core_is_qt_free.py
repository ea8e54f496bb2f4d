"""The core must run without Qt: importing every core module pulls in no Qt binding."""
import pkgutil
import subprocess
import sys

import explorer.core


def test_core_imports_no_qt():
    names = [m.name for m in pkgutil.walk_packages(explorer.core.__path__, "explorer.core.")]
    code = ("import sys, importlib\n"
            f"for n in {names!r}: importlib.import_module(n)\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'PyQt5', 'PyQt6', 'pyqtgraph')]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core pulled in Qt: {out.stdout}"
    assert len(names) >= 3
