"""The window's language: --lang wins over the saved View > Language choice, which wins over the
locale; installing zh_CN translates the widgets (explorer.po through explorer.core.i18n, the
core's catalogue) and Qt's own dialogs (qtbase_zh_CN shipped with PySide6); View > Language saves
the choice for the next start."""
from __future__ import annotations

import os

from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtGui import QAction

from explorer import translators
from explorer.core import i18n


def test_language_precedence(tmp_path, monkeypatch):
    s = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    monkeypatch.setenv("LANGUAGE", "")
    monkeypatch.setenv("LC_ALL", "")
    monkeypatch.setenv("LC_MESSAGES", "")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert translators.chosen_language(None, s) == "zh_CN"          # the locale
    s.setValue(translators.SETTING, "en")
    assert translators.chosen_language(None, s) == "en"             # the saved choice
    assert translators.chosen_language("zh_CN", s) == "zh_CN"       # --lang


def test_install_translates_widgets_and_qt_dialogs(qapp):
    try:
        translators.install("zh_CN", qapp)
        assert i18n.language() == "zh_CN"
        assert i18n._("&File") == "文件(&F)"
        assert i18n._("preempted") == "被抢占"   # a module-level N_() table (Timeline)
        # no Qt Linguist catalogue of ours any more: Qt translates only its own strings
        assert QCoreApplication.translate("MainWindow", "&File") == "&File"
        # Qt's own strings (file dialogs, button boxes) from qtbase_zh_CN.qm
        assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "取消"
    finally:
        translators.install("en", qapp)
    assert i18n._("&File") == "&File"
    assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "Cancel"
    assert i18n.language() == "en"


def test_panel_titles_are_the_section_registrys_in_both_languages(qapp, qtbot, tmp_path):
    """Docks, tabs and View menu name each panel as the section registry does (pipeline's
    panel names, translated in the "panel" context): Chinese in a zh_CN window, where "Cases"
    names the table (not the count a report's column header means by it)."""
    from explorer.core import sections
    from explorer.session import Session
    from explorer.widgets.mainwindow import MainWindow

    def titles():
        w = MainWindow(Session(), QSettings(str(tmp_path / "t.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(w)
        view = {a.text() for a in w.findChildren(QAction)}
        return {n: d.windowTitle() for n, d in w.docks.items()}, view
    en, en_view = titles()
    assert en["header"] == "Cohort" and en["comparison"] == "Metric comparison"
    assert en == {n: sections.panel_title("cohort" if n == "header" else n) for n in en}
    assert set(en.values()) <= en_view
    try:
        translators.install("zh_CN", qapp)
        zh, zh_view = titles()
    finally:
        translators.install("en", qapp)
    assert (zh["header"], zh["conclusion"], zh["whatif"], zh["timeline"], zh["cases"]) == (
        "分析对象", "定界结论", "反事实推演", "时间线", "Case")
    assert i18n.pgettext("panel", "Cases") == "Cases" and set(zh.values()) <= zh_view
    kept_latin = {"sla"}   # SLA stays as engineers write it (GLOSSARY-zh)
    assert all(zh[n] != en[n] for n in zh if n not in kept_latin)


def test_view_language_menu_saves_the_choice(qtbot, tmp_path):
    from explorer.session import Session
    from explorer.widgets.mainwindow import MainWindow
    s = QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Session(), s)
    qtbot.addWidget(w)
    assert set(w.language_actions) == set(i18n.LANGUAGES)
    assert w.language_actions["en"].isChecked()
    menu = w.language_actions["en"].associatedObjects()[-1]  # View > Language
    notes = [a for a in menu.actions() if not a.isSeparator() and a not in w.language_actions.values()]
    assert [a.text() for a in notes] == ["Applies at the next start"] and not notes[0].isEnabled()
    w.language_actions["zh_CN"].trigger()
    assert s.value(translators.SETTING) == "zh_CN"
    assert "简体中文" in w.statusBar().currentMessage()
    assert os.path.exists(tmp_path / "w.ini")


def test_saved_language_applies_at_the_next_start(qapp, qtbot, tmp_path):
    """The run-time switch: View > Language saves zh_CN; the next start (chosen_language, then
    install, as explorer.app.main does) builds a window whose menus, panels and buttons read
    Chinese, and Qt's own dialog buttons too."""
    from PySide6.QtWidgets import QDialogButtonBox, QPushButton

    from explorer.session import Session
    from explorer.widgets.mainwindow import MainWindow
    s = QSettings(str(tmp_path / "n.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Session(), s)
    qtbot.addWidget(w)
    w.language_actions["zh_CN"].trigger()
    assert w.menuBar().actions()[0].text() == "&File"   # this window stays English
    try:
        translators.install(translators.chosen_language(None, s), qapp)
        w2 = MainWindow(Session(), s)
        qtbot.addWidget(w2)
        assert w2.menuBar().actions()[0].text() == "文件(&F)"
        buttons = {b.text() for b in w2.findChildren(QPushButton)}
        assert "运行" in buttons and "Run" not in buttons   # Replay / What-if (context "button")
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        assert box.button(QDialogButtonBox.StandardButton.Cancel).text() == "取消"
    finally:
        translators.install("en", qapp)


def test_tree_node_keeps_a_glossary_name_whole(qapp):
    """A Chinese metric name with its English term in brackets ("批大小（batch size）") splits
    before the bracket instead of being elided, when name and comparison alone do not fit."""
    from PySide6.QtGui import QFont, QFontMetricsF
    from explorer.widgets.painters.tree import node_lines
    fm = QFontMetricsF(QFont())
    text = "批大小（batch size） ≤ 10.3 requests"
    width = max(fm.horizontalAdvance(s) for s in ("批大小", "（batch size）", "≤ 10.3 requests")) + 2
    assert fm.horizontalAdvance("批大小（batch size）") > width  # two lines would elide it
    assert node_lines(text, fm, width) == ["批大小", "（batch size）", "≤ 10.3 requests"]
    assert node_lines("TTFT > 5 ms", fm, width) == ["TTFT > 5 ms"]
