"""The widgets' language (DESIGN "Languages"): Qt Linguist catalogues installed as QTranslators.

resources/i18n/trace_explorer_<lang>.ts (pyside6-lupdate, committed) is compiled to .qm by
`make translations` (pyside6-lrelease); Qt's own dialogs use the qtbase_<lang>.qm that PySide6
ships. The core's catalogue (explorer.core.i18n) is switched to the same language.

Language: --lang, else the choice saved from View > Language (QSettings "language"), else the
system locale. A change in View > Language is saved and applies at the next start.
"""
from __future__ import annotations

import logging
import subprocess
import tempfile
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QSettings, QTranslator

from explorer.core import i18n

log = logging.getLogger(__name__)
SETTING = "language"
_installed: list[QTranslator] = []
_current = {"lang": "en"}


def chosen_language(cli: str | None, settings: QSettings | None) -> str:
    """--lang wins, then the saved View > Language choice, then the system locale."""
    if cli:
        return i18n.normalize(cli)
    saved = settings.value(SETTING, "") if settings is not None else ""
    if saved:
        try:
            return i18n.normalize(str(saved))
        except ValueError:
            pass
    return i18n.system_language()


def _qm(lang: str) -> Path | None:
    """The compiled widget catalogue; compiled into a temporary folder with pyside6-lrelease
    when `make translations` has not built it (or its .ts is newer)."""
    base = Path(str(i18n.catalogue_dir()))
    ts, qm = base / f"trace_explorer_{lang}.ts", base / f"trace_explorer_{lang}.qm"
    if qm.is_file() and (not ts.is_file() or qm.stat().st_mtime >= ts.stat().st_mtime):
        return qm
    if not ts.is_file():
        return None
    out = Path(tempfile.gettempdir()) / f"trace_explorer_{lang}.{int(ts.stat().st_mtime)}.qm"
    if not out.is_file():
        import PySide6
        tool = Path(PySide6.__file__).parent / "lrelease"
        try:
            subprocess.run([str(tool), "-silent", str(ts), "-qm", str(out)], check=True,
                           timeout=60, capture_output=True)
        except (OSError, subprocess.SubprocessError) as e:
            log.warning("cannot compile %s (%s): run `make translations`", ts, e)
            return None
    return out


def install(lang: str, app=None) -> str:
    """Set the language of the core and install the widgets' and Qt's translators (removing
    those of an earlier call); returns the language."""
    app = app or QCoreApplication.instance()
    i18n.set_language(lang)
    for t in _installed:
        app.removeTranslator(t)
    _installed.clear()
    _current["lang"] = lang
    QLocale.setDefault(QLocale("zh_CN" if lang == "zh_CN" else "en_US"))
    if lang == "en":
        return lang
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    for path in (_qm(lang), Path(qt_dir) / f"qtbase_{lang}.qm"):
        t = QTranslator(app)
        if path is not None and t.load(str(path)):
            app.installTranslator(t)
            _installed.append(t)
        else:
            log.warning("no %s translation at %s", lang, path)
    return lang


def sync(app=None) -> None:
    """Install the translators of the core's current language when they differ (the report's
    renderer: `--lang` set the core's language before Qt started)."""
    if i18n.language() != _current["lang"]:
        install(i18n.language(), app)
