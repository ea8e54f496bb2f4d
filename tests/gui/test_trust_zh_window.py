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
        "lm-eval", "kubernetes", "spark", "databricks", "emr", "connect", "l1", "l2", "l3", "p99", "e2e",
        "qps", "gb", "b", "x", "log", "trace explorer", "explorer", "fp16", "llama-3.1-8b",
        "mooncake", "delong", "welch", "hodges-lehmann", "mcnemar", "wilson", "ms/token",
        "vs",      # "Badcase 组 vs 对照组" (GLOSSARY-zh)
        "tok", "lfu",   # a unit (tokens/s) and an eviction policy's name
        "y"}       # pyqtgraph's unnamed axis


# A published aggregate named by its key and statistic ("ttft_ms mean", "requests completed")
# in the Runs tab: left in English (identifiers of the tool's file), see docs/trust.md.
STATS = r"(mean|median|min|max|std|p\d+|completed|failed|total|value)"
AGGREGATE_KEY = re.compile(r"[a-z0-9_]+ " + STATS)
# the same in the Compare tab's text: a metric key with its statistic ("ttft_ms median")
KEY_STAT = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+ " + STATS + r"\b")


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
    _no_english(qapp, qtbot, tmp_path, lambda s: s.load_demo())


def test_no_english_word_in_a_chinese_real_file_session(qapp, qtbot, tmp_path, real):
    """AIPerf's published request export with the MMLU-Pro Llama-3.1 8B and 70B outputs: cases
    that bind to no request, compared by their text lengths ("characters" was left in English
    in the conclusion)."""
    files = [real / "aiperf_example" / "profile_export.jsonl",
             *sorted((real / "mmlu_pro_outputs").glob("*.json"))]
    assert all(f.is_file() for f in files)
    _no_english(qapp, qtbot, tmp_path, lambda s: s.load_paths([str(f) for f in files]))


def _no_english(qapp, qtbot, tmp_path, load):
    from explorer.session import Session
    from explorer.widgets.mainwindow import MainWindow
    translators.install("zh_CN", qapp)
    try:
        s = Session()
        w = MainWindow(s, QSettings(str(tmp_path / "zh.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(w)
        w.resize(1600, 1000)
        w.show()
        load(s)
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
        for sql in ("SELECT DISTINCT model FROM runs",):   # a column some stores lack
            try:
                data |= {str(v) for (v,) in cur.execute(sql).fetchall() if v is not None}
            except Exception:  # noqa: BLE001 - duckdb's binder error: no such column
                pass
        data |= {p.rsplit("/", 1)[-1] for p in list(data) if "/" in p}
        flat_data = {" ".join(d.split()) for d in data}   # a cell shows a text on one line
        long_data = [d for d in flat_data if len(d) > 60]
        for r in s.data.get("inputs") or []:
            data |= {str(r.path), str(r.path).rsplit("/", 1)[-1]}
        found = {}
        for kind, text in visible_texts(w):
            if text.startswith("…") and any(d.endswith(text[1:]) for d in data):
                continue   # a name cut at its shared prefix (the Inputs and Clusters tables)
            flat = " ".join(text.split())
            if flat in flat_data or len(flat) >= 60 and any(d.startswith(flat[:60]) for d in long_data):
                continue   # a prompt or an answer cut at the cell's width: data
            if kind == "cell" and AGGREGATE_KEY.fullmatch(text):
                continue   # KNOWN LEFT: the Runs tab names published aggregates by their keys
            text = KEY_STAT.sub(" ", text)   # KNOWN LEFT: the Compare tab's, likewise
            words = [x for x in english_words(text, data) if x.lower() not in KEPT]
            if words:
                found.setdefault(" ".join(words), (kind, text[:120]))
        assert not found, "\n".join(f"{k}: {v}" for k, v in list(found.items())[:60])
        w.stop_workers(20000)
        for r in s.runners():
            r.wait(20000)
    finally:
        translators.install("en", qapp)
