"""Issue 33, item 7: no English left in the Chinese window. The demo in zh_CN, every panel
painted; every visible widget's text (labels, buttons, combo boxes, tab and dock titles, table
headers and the cells on screen, text browsers) is walked and each Latin word must be a field
term kept in Latin letters (GLOSSARY-zh.md, tests/i18n_check.py), a unit, an identifier or data
(cluster, file, run, eval, model and benchmark names, prompts and answers)."""
from __future__ import annotations

import re

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QComboBox, QDockWidget, QLabel,
                               QTabBar, QTextEdit)

from explorer import translators
from tests.gui.conftest import painted
from tests.i18n_check import english_words

# engine and tool names, statistics the glossary keeps, the demo's own data words
KEPT = {"vllm-sim", "sim", "lru", "fifo", "ecdf", "tsv", "markdown", "ctrl", "alt", "esc", "shift",
        "or", "ci", "dag", "ate", "kv-cache", "nan", "aibrix", "aiperf", "otlp", "helm", "llmperf",
        "lm-eval", "spark", "databricks", "emr", "connect", "l1", "l2", "l3", "p99", "e2e",
        "qps", "gb", "b", "x", "log", "trace explorer", "explorer", "fp16", "llama-3.1-8b",
        "mooncake", "delong", "welch", "hodges-lehmann", "mcnemar", "wilson", "ms/token",
        "vs",      # "Badcase 组 vs 对照组" (GLOSSARY-zh)
        "chars", "tok", "lfu",   # units (characters, tokens/s) and an eviction policy's name
        "y"}       # pyqtgraph's unnamed axis


def visible_texts(window) -> list[tuple[str, str]]:
    out = []
    for w in window.findChildren(QLabel):
        if w.isVisibleTo(window) and w.text():  # rich text: the tags are not on screen
            text = w.text()
            if w.textFormat() != Qt.TextFormat.PlainText and "<" in text:
                text = re.sub(r"<[^>]+>", " ", text)
            out.append((type(w).__name__, text))
    for w in window.findChildren(QAbstractButton):
        if w.isVisibleTo(window) and w.text():
            out.append(("button", w.text()))
    for w in window.findChildren(QComboBox):
        if w.isVisibleTo(window):
            out += [("combo", w.itemText(i)) for i in range(w.count())]
    for w in window.findChildren(QTabBar):
        if w.isVisibleTo(window):
            out += [("tab", w.tabText(i)) for i in range(w.count())]
    for w in window.findChildren(QDockWidget):
        out.append(("dock", w.windowTitle()))
    for w in window.findChildren(QTextEdit):
        if w.isVisibleTo(window):
            out.append(("text", w.toPlainText()))
    for v in window.findChildren(QAbstractItemView):
        m = v.model()
        if m is None or not v.isVisibleTo(window):
            continue
        for c in range(m.columnCount()):
            out.append(("header", str(m.headerData(c, Qt.Orientation.Horizontal) or "")))
            for r in range(min(m.rowCount(), 12)):
                out.append(("cell", str(m.index(r, c).data() or "")))
    return out


def test_no_english_word_in_the_chinese_window(qapp, qtbot, tmp_path):
    from explorer.session import Session
    from explorer.widgets.mainwindow import MainWindow
    translators.install("zh_CN", qapp)
    try:
        s = Session()
        w = MainWindow(s, QSettings(str(tmp_path / "zh.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(w)
        w.resize(1600, 1000)
        w.show()
        s.load_demo()
        qtbot.waitUntil(lambda: s.cluster is not None and s.runner.pending() == 0
                        and s.data.get("conclusion") is not None, timeout=240000)
        painted(w)
        cur = s.store.cursor()
        data = set()
        for sql in ("SELECT DISTINCT cluster FROM cases", "SELECT DISTINCT category FROM cases",
                    "SELECT DISTINCT eval_id FROM cases", "SELECT DISTINCT model FROM cases",
                    "SELECT DISTINCT prompt FROM cases", "SELECT DISTINCT prediction FROM cases",
                    "SELECT DISTINCT run_id FROM runs", "SELECT DISTINCT label FROM runs",
                    "SELECT DISTINCT benchmark FROM runs", "SELECT DISTINCT engine FROM runs",
                    "SELECT DISTINCT source_path FROM runs", "SELECT DISTINCT request_id FROM requests"):
            data |= {str(v) for (v,) in cur.execute(sql).fetchall() if v is not None}
        data |= {p.rsplit("/", 1)[-1] for p in list(data) if "/" in p}
        for r in s.data.get("inputs") or []:
            data |= {str(r.path), str(r.path).rsplit("/", 1)[-1]}
        found = {}
        for kind, text in visible_texts(w):
            if text.startswith("…") and any(d.endswith(text[1:]) for d in data):
                continue   # a name cut at its shared prefix (the Inputs and Clusters tables)
            words = [x for x in english_words(text, data) if x.lower() not in KEPT]
            if words:
                found.setdefault(" ".join(words), (kind, text[:120]))
        assert not found, "\n".join(f"{k}: {v}" for k, v in list(found.items())[:60])
        w.stop_workers(20000)
        for r in s.runners():
            r.wait(20000)
    finally:
        translators.install("en", qapp)
