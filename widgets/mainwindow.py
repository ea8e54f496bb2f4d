"""The main window: docks for every panel, menus, shortcuts, drag-and-drop, status bar with
progress and Cancel, and QSettings for geometry, layout and recent files."""
from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QSettings, QSize, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QActionGroup, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QApplication, QDockWidget, QFileDialog, QFrame, QLabel, QMainWindow,
                               QMessageBox, QProgressBar, QPushButton, QScrollArea, QTabBar,
                               QWidget)

from explorer.core.fmt import by_spec
from explorer.core import bus
from explorer.core.i18n import _
from explorer.core.names import plural
from explorer.reporting.export import export_report
from explorer.widgets import palette
from explorer.widgets.base import copy_mime
from explorer.widgets.panels import PANELS, SCROLLED, title
from explorer.workers import shutdown_all

log = logging.getLogger(__name__)

MAX_RECENT = 10
DEFAULT_SIZE = (1600, 1000)
LAYOUT_VERSION = 2  # 2: the Timeline moved among the centre tabs
PRELOAD_AFTER_MS = 1000  # the window shown this long: import what the analyses need


def _preload() -> None:
    from explorer.core.preload import preload
    preload()  # once per process; a load started before it already did (Session.load_paths)


class MainWindow(QMainWindow):
    """MainWindow(session, settings=None). panels: {name: widget}; docks: {name: QDockWidget}."""

    def __init__(self, session, settings: QSettings | None = None):
        super().__init__()
        self.session = session
        self.settings = settings or QSettings()
        self.setWindowTitle(_("Trace Explorer"))
        self.setObjectName("MainWindow")
        self.setDockNestingEnabled(True)
        self.setDockOptions(QMainWindow.DockOption.AllowTabbedDocks | QMainWindow.DockOption.AllowNestedDocks
                            | QMainWindow.DockOption.AnimatedDocks)
        self.setTabPosition(Qt.DockWidgetArea.AllDockWidgetAreas, self.tabPosition(Qt.DockWidgetArea.TopDockWidgetArea).North)
        self.resize(fit_size(DEFAULT_SIZE, available(self.screen())))
        self.panels: dict[str, QWidget] = {}
        self.docks: dict[str, QDockWidget] = {}
        self._build_docks()
        self._build_status()
        self._build_menus()
        self._restore_geometry()
        self.setAcceptDrops(True)
        QApplication.instance().installEventFilter(self)
        self._current: str | None = None  # the panel last focused (Ctrl+C copies it)
        QApplication.instance().focusChanged.connect(self._focus_changed)
        session.message.connect(self._show_message)  # bound methods: see _on_results
        session.storeChanged.connect(self._update_actions)
        session.storeChanged.connect(self._front_tab)
        session.selectionChanged.connect(self._update_actions)
        if hasattr(session, "requestActivated"):  # the Timeline panel paints it; show its dock
            session.requestActivated.connect(self._show_timeline)

    def _front_tab(self) -> None:
        """Traces without eval cases open on what they can answer (issue 33): the Versions tab
        in front of the metric comparison, which needs badcases."""
        meta = self.session.results.view(bus.META) or {}
        if meta and not meta.get("cases") and meta.get("runs") and "versions" in self.docks:
            self.show_panel("versions")

    def _show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    def _show_timeline(self, _run=None, _req=None) -> None:
        self.show_panel("timeline")

    # -- docks ------------------------------------------------------------------------------
    def _build_docks(self) -> None:
        centre, bottom = [], []
        for name, cls, area in PANELS:
            try:
                panel = cls(self.session)
            except Exception as e:  # noqa: BLE001
                log.warning("panel %s failed to start: %s", name, e)
                panel = QLabel(_("This panel could not start: {error}").format(error=str(e)))
                panel.setWordWrap(True)
            dock = QDockWidget(title(name), self)
            dock.setObjectName(f"dock_{name}")
            if name in SCROLLED:  # never let its minimum size widen the window:
                scroll = QScrollArea()  # scroll inside the dock instead
                scroll.setWidgetResizable(True)
                scroll.setFrameShape(QFrame.Shape.NoFrame)
                scroll.setWidget(panel)
                dock.setWidget(scroll)
            else:
                dock.setWidget(panel)
            self.panels[name], self.docks[name] = panel, dock
            if area == "top":
                dock.setTitleBarWidget(QWidget())
                dock.setFeatures(QDockWidget.DockWidgetFeature.NoDockWidgetFeatures)
                self.addDockWidget(Qt.DockWidgetArea.TopDockWidgetArea, dock)
            elif area == "bottom":
                self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
                bottom.append(dock)
            else:
                self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
                if area == "centre":
                    centre.append(dock)
        d = self.docks
        if "clusters" in d and centre:
            self.splitDockWidget(d["clusters"], centre[0], Qt.Orientation.Horizontal)
        if centre and "conclusion" in d:
            self.splitDockWidget(centre[0], d["conclusion"], Qt.Orientation.Horizontal)
        if "clusters" in d and "inputs" in d:
            self.splitDockWidget(d["clusters"], d["inputs"], Qt.Orientation.Vertical)
        self._centre, self._bottom = centre, bottom
        self._tabify(centre)
        self.session.deferred = self._deferred_sections()
        self.fit_layout()

    def _deferred_sections(self) -> frozenset[str]:
        """The analyses whose panel is a tab behind another at start and that the conclusion
        does not read (heatmap, SLA, engine): the session computes them when their tab is first
        shown, not at every drop (issue 17, drop to dashboard)."""
        from explorer.core.sections import BY_KEY
        from explorer.session import ANALYSIS_KEYS
        behind = self._centre[1:] + self._bottom[1:]  # each group's first tab is in front
        needed = set(BY_KEY["conclusion"].needs) | {"conclusion"}
        return frozenset(k for k in ANALYSIS_KEYS
                         if k in self.docks and k not in needed and self.docks[k] in behind)

    def _tabify(self, group: list) -> None:
        """Stack a group of docks as tabs, the first one in front. The bottom group is tabbed
        once the window is shown: a second group tabbed before, Qt (6.11) leaves a stale copy of
        its tab bar visible (it covered the Inputs panel)."""
        for other in group[1:]:
            self.tabifyDockWidget(group[0], other)
        if group:
            group[0].raise_()

    def fit_layout(self, size: QSize | None = None) -> None:
        """Share the window between the docks by proportion of its size: on a laptop screen
        (1366x768) the side panels narrow and the bottom tabs shrink to a strip; on a large
        one (2560x1440) the analysis tabs keep about two thirds of the height."""
        size = size or self.size()
        w, h = size.width(), size.height()
        d, centre, bottom = self.docks, self._centre, self._bottom
        left = [d[n] for n in ("clusters", "conclusion") if n in d] + centre[:1]
        side = 0.26 if w < 1500 else 0.27 if w < 2200 else 0.22
        widths = [int(w * side), int(w * (0.17 if w < 1500 else 0.21)), 0]
        widths[2] = max(300, w - widths[0] - widths[1])
        self.resizeDocks(left, widths[:len(left) - 1] + widths[2:], Qt.Orientation.Horizontal)
        vert = [d[n] for n in ("clusters", "inputs") if n in d]
        self.resizeDocks(vert, [int(h * 0.42), int(h * 0.26)], Qt.Orientation.Vertical)
        if bottom and centre:
            low = 0.24 if h < 900 else 0.28
            self.resizeDocks([centre[0], bottom[0]], [int(h * (1 - low)), int(h * low)],
                             Qt.Orientation.Vertical)

    # -- status bar -------------------------------------------------------------------------
    def _build_status(self) -> None:
        sb = self.statusBar()
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(260)
        self.progress.setTextVisible(True)
        self.cancel_button = QPushButton(_("Cancel"))
        self.cancel_button.setToolTip(_("Stop the running jobs: loading, analyses, "
                                        "what-if and replay"))
        self.cancel_button.clicked.connect(self.session.cancel)
        self.inputs_status = QLabel()
        self.inputs_status.setToolTip(_("Files loaded into this session; the Inputs panel "
                                        "(Alt+2) says why a file could not be read"))
        sb.addPermanentWidget(self.inputs_status)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.cancel_button)
        # bound methods, not lambdas: Qt drops a bound method's connection when the window is
        # deleted, a lambda's would outlive it (a job ending later touched a deleted widget)
        self.session.resultsChanged.connect(self._on_results)
        self.session.resultsChanged.connect(self._front_engine_without_eval)
        self._runner_shown: dict = {}  # runner -> its last (label, done, total)
        self._set_busy(False)
        for r in self.session.runners():   # every job: loads, analyses, what-if, replay
            r.busy.connect(self._on_busy)
            r.idle.connect(self._on_idle)

    def _on_results(self, update: bus.Update) -> None:
        if (inputs := bus.SECTION["inputs"]) in update:
            self._show_inputs_status(update.view(inputs))

    def _on_idle(self) -> None:
        """A runner went idle: another one still busy shows its own last label and progress
        again (not the idle one's, e.g. a finished what-if's beside a running load)."""
        self._runner_shown.pop(self.sender(), None)
        busy = [r for r in self.session.runners() if r.pending() and r in self._runner_shown]
        if busy:
            self._show_busy(*self._runner_shown[busy[-1]])
        else:
            self._set_busy(any(x.pending() for x in self.session.runners()))

    def _front_engine_without_eval(self, update: bus.Update) -> None:
        """Engine logs / scrapes loaded without an eval: the Engine tab is the one with
        something to show, so it comes to the front (once per load; the user's choice wins)."""
        eng = update.view(bus.SECTION["engine"])
        meta = self.session.results.view(bus.META) or {}
        sla = update.view(bus.SECTION["sla_diagnosis"])  # a trace without eval opens on SLA over time
        if isinstance(sla, dict) and sla.get("windows") and not meta.get("cases") and "sla" in self.docks:
            self.show_panel("sla")
        elif isinstance(eng, dict) and "runs" in eng and not meta.get("cases"):
            self.show_panel("engine")

    def _show_inputs_status(self, reports) -> None:
        """'4 files loaded · 1 could not be read · 2 ignored' in the status bar, kept (unlike a
        message) so a failed file stays in sight after the analyses ran."""
        reports = list(reports or [])
        failed = sum(1 for r in reports if getattr(r, "error", None))
        ignored = sum(1 for r in reports if getattr(r, "skipped_file", None))
        loaded = len(reports) - failed - ignored
        parts = [_("{files} loaded").format(files=plural(loaded, "file"))] if reports else []
        if failed:
            parts.append(_("{files} could not be read").format(files=by_spec(failed, ',')))
        if ignored:
            parts.append(_("{files} ignored").format(files=by_spec(ignored, ',')))
        self.inputs_status.setText(" · ".join(parts))
        self.inputs_status.setStyleSheet(f"color: {palette.BAD};" if failed else "")

    def _on_busy(self, text: str, done: int, total: int) -> None:
        self._runner_shown[self.sender()] = (text, done, total)  # each runner's last, for _on_idle
        self._show_busy(text, done, total)

    def _show_busy(self, text: str, done: int, total: int) -> None:
        self._set_busy(True)
        self.progress.setRange(0, total if total > 0 else 0)
        if total > 0:
            self.progress.setValue(done)
        self.progress.setFormat(f"{text[:40]} %p%" if total > 0 else text[:40])
        self._busy_text = text
        self.statusBar().showMessage(text)

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if not busy and self.statusBar().currentMessage() in ("", getattr(self, "_busy_text", "")):
            self.statusBar().showMessage(_("Ready"), 3000)

    # -- menus ------------------------------------------------------------------------------
    def _act(self, menu, text, slot, shortcut=None, tip=None) -> QAction:
        a = QAction(text, self)
        if shortcut:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setToolTip(tip)
            a.setStatusTip(tip)
        a.triggered.connect(lambda _checked=False: slot())  # never pass `checked` on
        menu.addAction(a)
        return a

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu(_("&File"))
        self._act(f, _("&Open files…"), self.open_files, QKeySequence.StandardKey.Open)
        self._act(f, _("Open &folder…"), self.open_folder, "Ctrl+Shift+O")
        self.recent_menu = f.addMenu(_("Open &Recent"))
        self._act(f, _("Load &demo workload"), self.session.load_demo, "Ctrl+D",
                  _("Load the simulated demo (two engine versions, Chinese cluster names)"))
        self._act(f, _("Connect to &warehouse…"), self.connect_warehouse, None,
                  _("Take the requests from a Spark Connect server (Spark, Databricks, EMR) "
                    "or a local one; the eval cases stay here"))
        f.addSeparator()
        self._act(f, _("Open &Session…"), self.open_session, "Ctrl+Shift+L")
        self.locate_action = self._act(
            f, _("&Locate a moved file…"), self.locate_moved_file, None,
            _("A file the session reads in place was moved or changed since it was saved: "
              "point the session at it again (its SHA-256 must be the one loaded)"))
        self.save_action = self._act(f, _("&Save Session As…"), self.save_session,
                                     QKeySequence.StandardKey.Save)
        self._act(f, _("Save Session with &Data…"), lambda: self.save_session(with_data=True),
                  "Ctrl+Alt+S", _("Also copy into the session file the rows of the files read in "
                                  "place: it then opens on another machine, without them"))
        f.addSeparator()
        self.export_action = self._act(f, _("&Export Report…"), self.export_report, "Ctrl+E")
        f.addSeparator()
        self._act(f, _("&Quit"), self.close, QKeySequence.StandardKey.Quit)
        e = mb.addMenu(_("&Edit"))
        self._act(e, _("&Copy"), self.copy, QKeySequence.StandardKey.Copy)
        self.clear_action = self._act(e, _("C&lear selection"), self.session.clear_selection, "Esc")
        self.back_action = self._act(e, _("&Back"), self.session.back, QKeySequence.StandardKey.Back)
        self.fwd_action = self._act(e, _("&Forward"), self.session.forward, QKeySequence.StandardKey.Forward)
        self._act(e, _("&Re-run analyses"), self.session.refresh, QKeySequence.StandardKey.Refresh)
        v = mb.addMenu(_("&View"))
        for name, dock in self.docks.items():
            a = dock.toggleViewAction()
            a.setText(title(name))
            v.addAction(a)
        v.addSeparator()
        go = v.addMenu(_("&Go to panel"))
        for i, name in enumerate(n for n in self.docks if n != "header"):
            self._act(go, title(name), lambda n=name: self.focus_panel(n),
                      panel_shortcut(i))
        v.addSeparator()
        self._act(v, _("&Reset layout"), self.reset_layout, "Ctrl+Shift+R")
        self._language_menu(v.addMenu(_("&Language")))
        h = mb.addMenu(_("&Help"))
        self._act(h, _("&About Trace Explorer"), self.about)
        self._update_recent()
        self._update_actions()

    def _language_menu(self, menu) -> None:
        """View > Language: English / 简体中文 (each named in its own language), saved in the
        settings; the window is built in the new language at the next start."""
        from explorer import translators
        from explorer.core import i18n
        group = QActionGroup(self)
        self.language_actions = {}
        for code in i18n.LANGUAGES:
            a = QAction(i18n.NAMES[code], self, checkable=True)
            a.setChecked(code == i18n.language())
            a.triggered.connect(lambda _c=False, c=code: self.set_language(c))
            group.addAction(a)
            menu.addAction(a)
            self.language_actions[code] = a
        menu.addSeparator()
        # live switching would rebuild every panel's text and the results' sentences: the
        # window is built in the chosen language at the next start, and the menu says so
        note = menu.addAction(_("Applies at the next start"))
        note.setEnabled(False)
        self._language_setting = translators.SETTING

    def set_language(self, code: str) -> None:
        """Remember the language (View > Language) for the next start and say so."""
        from explorer.core import i18n
        self.settings.setValue(self._language_setting, code)
        self.settings.sync()
        if code != i18n.language():
            self.statusBar().showMessage(
                _("The language changes to {language} at the next start.").format(
                        language=i18n.NAMES[code]), 10000)

    def _update_actions(self) -> None:
        s = self.session
        self.back_action.setEnabled(s.can_back())
        self.fwd_action.setEnabled(s.can_forward())
        self.locate_action.setEnabled(bool(s.results.view(bus.DETACHED_FILES)))
        self.export_action.setToolTip(_("Write the report bundle (PNG, HTML, PDF, Markdown, JSON)"))

    # -- file actions -----------------------------------------------------------------------
    def load(self, paths: list[str]) -> None:
        """Load files/folders (menus, drag-and-drop, command line) and remember them."""
        paths = [str(p) for p in paths if p]
        if not paths:
            return
        recent = [p for p in self._recent() if p not in paths]
        self.settings.setValue("recent", (paths + recent)[:MAX_RECENT])
        self._update_recent()
        self.session.load_paths(paths)

    def open_files(self) -> None:
        paths, _filter = QFileDialog.getOpenFileNames(self, _("Open eval results and traces"),
                                                self.settings.value("lastdir", ""),
                                                _("Supported files (*.json *.jsonl *.csv *.parquet *.txt *.log);;All files (*)"))
        if paths:
            self.settings.setValue("lastdir", str(Path(paths[0]).parent))
            self.load(paths)

    def open_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, _("Open a folder"), self.settings.value("lastdir", ""))
        if path:
            self.settings.setValue("lastdir", path)
            self.load([path])

    def _recent(self) -> list[str]:
        v = self.settings.value("recent", [])
        return [v] if isinstance(v, str) else list(v or [])

    def _update_recent(self) -> None:
        self.recent_menu.clear()
        for p in self._recent():
            a = self.recent_menu.addAction(p)
            a.triggered.connect(lambda _=False, p=p: self.load([p]))
        self.recent_menu.setEnabled(bool(self._recent()))

    def open_session(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(self, _("Open session"), "",
                                              _("Trace Explorer session (*.duckdb)"))
        if path:
            self.session.open_session(path)

    def locate_moved_file(self) -> None:
        """File > Locate a moved file: which of the detached files (when several), then where it
        is now; the session checks its SHA-256 and re-attaches it (Session.relocate_file)."""
        from PySide6.QtWidgets import QInputDialog
        missing = list(self.session.results.view(bus.DETACHED_FILES) or [])
        if not missing:
            return
        old = missing[0]
        if len(missing) > 1:
            old, ok = QInputDialog.getItem(self, _("Locate a moved file"),
                                           _("File the session could not find:"), missing, 0, False)
            if not ok:
                return
        p = Path(old)
        new, _filter = QFileDialog.getOpenFileName(
            self, _("Where is {name} now? (it was in {folder})").format(
                    name=p.name, folder=p.parent),
            str(p.parent if p.parent.is_dir() else Path.home()),
            _("The same file ({pattern});;Any file (*)").format(
                    pattern=f"*{p.suffix}" if p.suffix else "*"))
        if new:
            self.session.relocate_file(old, new)

    def save_session(self, with_data: bool = False) -> None:
        path, _filter = QFileDialog.getSaveFileName(self, _("Save session"), "session.duckdb",
                                              _("Trace Explorer session (*.duckdb)"))
        if path:
            self.session.save_session(path if path.endswith(".duckdb") else path + ".duckdb",
                                      with_data=with_data)

    def connect_warehouse(self) -> None:
        from explorer.widgets.warehouse import WarehouseDialog
        dlg = WarehouseDialog(self.settings, self)
        if dlg.exec() != WarehouseDialog.DialogCode.Accepted:
            return
        dlg.remember()
        self.session.connect_warehouse(*dlg.values())

    def export_report(self) -> None:
        out = QFileDialog.getExistingDirectory(self, _("Export report to folder"))
        if not out:
            return
        s = self.session
        cohort = s.cohort()
        if cohort is None:
            return
        scenario = self.whatif_scenario()
        s.runner.submit("export", lambda ctx: export_report(s.store, cohort, out, progress=ctx.progress,
                                                            cancelled=ctx.cancelled, **scenario),
                        lambda files: (s.message.emit(_("Report written to {folder} ({n} files)").format(
                                folder=out, n=str(len(files)))),
                                       QDesktopServices.openUrl(QUrl.fromLocalFile(out))),
                        lambda e: QMessageBox.warning(self, _("Export failed"), _one_line(e)),
                        label=_("Writing report"))

    def whatif_scenario(self) -> dict:
        """export_report keywords for the What-if panel's scenario: the treatment, value and
        graph the user set (whatif) and, when it is finished and current, its result
        (whatif_result); {} without the panel or before it has a cohort."""
        panel = self.panels.get("whatif")
        if panel is None or getattr(panel, "frame", None) is None:
            return {}
        out = {"whatif": panel.report_args()}
        ready = panel.report_result()
        if ready is not None:
            out["whatif_result"] = ready
        return out

    def copy(self) -> None:
        """Copy the focused panel (the one that holds the keyboard focus, else the last one
        gone to with Alt+N or clicked) to the clipboard: text / TSV, and charts as a picture."""
        panel = self.current_panel()
        if panel is not None:
            QGuiApplication.clipboard().setMimeData(copy_mime(panel))

    def panel_of(self, w: QWidget | None) -> QWidget | None:
        """The panel that holds widget `w` (through its dock, scroll area and children), or None."""
        by_dock = {id(d): self.panels[n] for n, d in self.docks.items()}
        panels = {id(p) for p in self.panels.values()}
        while w is not None:
            if id(w) in panels:
                return w
            if id(w) in by_dock:
                return by_dock[id(w)]
            w = w.parentWidget()
        return None

    def current_panel(self) -> QWidget | None:
        panel = self.panel_of(QApplication.focusWidget())
        if panel is not None:
            return panel
        return self.panels.get(self._current or "") or self.panels.get("header")

    def _focus_changed(self, _old, new) -> None:
        panel = self.panel_of(new)
        if panel is not None:
            self._current = next(n for n, p in self.panels.items() if p is panel)

    def focus_panel(self, name: str) -> None:
        """Show a panel's dock, bring its tab to the front and give it the keyboard focus
        (the panel itself, also inside a scroll area: Ctrl+C then copies it)."""
        dock = self.docks[name]
        dock.show()
        dock.raise_()
        self._current = name
        panel = self.panels[name]
        if panel.focusPolicy() == Qt.FocusPolicy.NoFocus:
            panel.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        panel.setFocus()

    def show_panel(self, name: str) -> None:
        """Show a panel's dock and bring its tab to the front (keyboard focus stays put)."""
        dock = self.docks.get(name)
        if dock is not None:
            dock.show()
            dock.raise_()

    def reset_layout(self) -> None:
        if hasattr(self, "_default_state"):
            self.restoreState(self._default_state, LAYOUT_VERSION)
        for d in self.docks.values():
            d.show()
        self.fit_layout()

    def about(self) -> None:
        QMessageBox.about(self, _("About Trace Explorer"), about_html(self.session))

    # -- drag and drop ----------------------------------------------------------------------
    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:
        t = ev.type()
        if t == QEvent.Type.ChildPolished and obj is self and isinstance(ev.child(), QTabBar):
            QTimer.singleShot(0, self.tidy_tab_bars)  # a tab group made by re-docking
        if t in (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop) \
                and isinstance(obj, QWidget) and obj.window() is self:
            paths = _local_paths(ev.mimeData())
            if paths:
                ev.acceptProposedAction()
                if t == QEvent.Type.Drop:
                    self.load(paths)
                return True
        return False

    # -- settings ---------------------------------------------------------------------------
    def _restore_geometry(self) -> None:
        geo = self.settings.value("geometry")
        if geo is not None:
            self.restoreGeometry(geo)  # saved on a larger screen: shrink to this one
            fitted = fit_size((self.width(), self.height()), available(self.screen()))
            if fitted != self.size():
                self.resize(fitted)

    def showEvent(self, ev) -> None:
        super().showEvent(ev)
        if not hasattr(self, "_default_state"):  # the first show: tabs, then the saved layout
            self._tabify(self._bottom)
            self._default_state = self.saveState(LAYOUT_VERSION)
            st = self.settings.value("windowState")
            if st is None or not self.restoreState(st, LAYOUT_VERSION):
                QTimer.singleShot(0, self.fit_layout)  # share by the real size
            QTimer.singleShot(0, self.tidy_tab_bars)
            # the analyses' scipy / sklearn imports (~0.7 s of CPU) while nobody waits: a drop
            # then pays none of it; after the start-up, so the window opens as fast as before
            QTimer.singleShot(PRELOAD_AFTER_MS, _preload)

    def tidy_tab_bars(self) -> None:
        """Dock tab names in full, never elided ("Metric compari…", "Ru…" on a laptop): a
        tab bar too narrow for its tabs scrolls with arrow buttons instead."""
        from explorer.widgets.tabfit import fit_tab_bar
        for bar in self.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            bar.setElideMode(Qt.TextElideMode.ElideNone)
            bar.setUsesScrollButtons(True)
            bar.setExpanding(False)
            if bar.isVisible():   # compact before scrolling (issue 33): every tab in view
                x = bar.geometry().left()
                room = [d.width() for d in self.docks.values() if d.isVisible()
                        and abs(d.geometry().left() - x) <= 4 and d.geometry().top() >= bar.geometry().top()]
                fit_tab_bar(bar, max(room, default=bar.width()))

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        QTimer.singleShot(0, self.tidy_tab_bars)

    def closeEvent(self, ev) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("windowState", self.saveState(LAYOUT_VERSION))
        self.settings.sync()
        QApplication.instance().removeEventFilter(self)
        try:
            QApplication.instance().focusChanged.disconnect(self._focus_changed)
        except (RuntimeError, TypeError):
            pass
        self.stop_workers(CLOSE_WAIT_MS)  # bounded: run_app exits anyway when a job lingers
        super().closeEvent(ev)

    def runners(self) -> list:
        """The runners of every job of the window: the session's (panels keep none)."""
        return self.session.runners()

    def stop_workers(self, msecs: int = 5000) -> None:
        """Cancel every job and wait for the running ones to return, so no worker thread
        outlives the window: msecs in all, one deadline shared by the runners."""
        shutdown_all(self.runners(), msecs)


CLOSE_WAIT_MS = 1500  # closing the window waits this long in all for the running jobs, then exits


def _one_line(err: BaseException) -> str:
    """What the user reads of a failed job: the error's own sentence when it is one of ours,
    else its type and message with the error log's path (never a traceback)."""
    from explorer.core import errlog
    from explorer.core.errors import TraceExplorerError
    if isinstance(err, TraceExplorerError) and str(err):
        return str(err)
    return f"{errlog.describe(err)} ({errlog.record(err, 'window job')})"


def available(screen) -> QSize | None:
    """The screen's area free of task bars, or None without a real screen (the offscreen
    platform's pretend 800x800 screen of tests and --screenshot must not shrink the window)."""
    if screen is None or QGuiApplication.platformName() == "offscreen":
        return None
    return screen.availableGeometry().size()


def fit_size(size: tuple[int, int], avail: QSize | None) -> QSize:
    """`size` shrunk to the available area `avail` less the window frame, so the window never
    opens larger than the screen."""
    want = QSize(*size)
    if avail is None:
        return want
    return want.boundedTo(QSize(max(640, avail.width() - 16), max(480, avail.height() - 40)))


def panel_shortcut(i: int) -> str:
    """The key of the i-th panel (0-based, in the View > Go to panel order): Alt+1 ... Alt+9,
    Alt+0, then Ctrl+Alt+1 ... Ctrl+Alt+9, so that every panel has one."""
    if i < 10:
        return f"Alt+{(i + 1) % 10}"
    return f"Ctrl+Alt+{i - 9}"


def _local_paths(mime) -> list[str]:
    if mime is None or not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and u.toLocalFile()]


def about_html(session) -> str:
    """About text with the provenance of the loaded data (files, formats, sha256, simulated)."""
    from explorer.core.escape import html_text
    from importlib.metadata import PackageNotFoundError, version
    try:
        v = version("trace-explorer")
    except PackageNotFoundError:
        v = "dev"
    meta = session.results.view(bus.META) or {}
    rows = "".join(f"<tr><td>{html_text(Path(r.path).name)}</td><td>{html_text(r.format or '?')}</td>"
                   f"<td>{by_spec(r.rows_loaded, ',')}</td><td><code>{(r.sha256 or '–')[:12]}</code></td></tr>"
                   for r in session.results.ok(bus.SECTION["inputs"]) or [])
    sim = "<p><b>Simulated data:</b> " + html_text(meta.get("demo_note") or "the loaded runs are simulated.") + \
        "</p>" if meta.get("simulated") else ""
    return (f"<h3>Trace Explorer {html_text(v)}</h3><p>Binds LLM eval badcases to inference-engine "
            f"trace requests and explains them.</p>{sim}<p><b>Inputs</b></p>"
            f"<table>{rows or '<tr><td>nothing loaded</td></tr>'}</table>")
