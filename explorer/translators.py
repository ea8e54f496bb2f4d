"""The window's language (DESIGN "Languages"): one catalogue for every string of ours.

The widgets' strings go through explorer.core.i18n (`_()` / `ngettext` / `pgettext`, the
catalogue explorer.po, as the core's), switched here; Qt's own strings (standard dialog buttons,
file dialogs) through the qtbase_<lang>.qm that PySide6 ships, installed as a QTranslator.

Language: --lang, else the choice saved from View > Language (QSettings "language"), else the
system locale. A change in View > Language is saved and applies at the next start.
"""
from __future__ import annotations

import logging
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


def install(lang: str, app=None) -> str:
    """Set the language of our strings (explorer.core.i18n) and install Qt's own translator
    (removing that of an earlier call); returns the language. Widgets built afterwards read
    it: a change from View > Language applies at the next start."""
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
    path = Path(qt_dir) / f"qtbase_{lang}.qm"
    t = QTranslator(app)
    if t.load(str(path)):
        app.installTranslator(t)
        _installed.append(t)
    else:
        log.warning("no %s translation of Qt's dialogs at %s", lang, path)
    return lang


def sync(app=None) -> None:
    """Install Qt's translator of the core's current language when it differs (the report's
    renderer: `--lang` set the core's language before Qt started)."""
    if i18n.language() != _current["lang"]:
        install(i18n.language(), app)
