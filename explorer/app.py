"""The desktop application: QApplication set-up (fonts with CJK fallback, style sheet, crash
guard), the main window (widgets/mainwindow.py), and `--screenshot` (load, wait for every
panel's result, render, save, exit).

    run_app(args) -> int     args: files (list), demo (bool), session (path|None),
                             screenshot (PNG path|None), size ("WxH"|None: the window's size;
                             --screenshot defaults to 1600x1000)
"""
from __future__ import annotations

import logging
import os
import sys
import threading
from importlib import resources as importlib_resources

from PySide6.QtCore import QCoreApplication, QSettings, QTimer
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QApplication, QMessageBox

from explorer.qtmessages import filter_qt_noise  # noqa: F401 - shared with the reports
from explorer.core.i18n import _

log = logging.getLogger("explorer")

CJK_FAMILIES = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC",
                "Droid Sans Fallback", "Microsoft YaHei", "PingFang SC")
LATIN_FAMILIES = ("Noto Sans", "DejaVu Sans", "Liberation Sans", "Segoe UI", "Helvetica")
SCREENSHOT_TIMEOUT_S = 300
SCREENSHOT_SIZE = (1600, 1000)


def app_font(point_size: float = 9.5) -> QFont:
    """The UI font: an installed Latin family, then a CJK-capable fallback so Chinese cluster
    names render as glyphs (QFont.setFamilies gives per-glyph fallback in that order)."""
    have = set(QFontDatabase.families())
    fams = [f for f in LATIN_FAMILIES if f in have][:1] + [f for f in CJK_FAMILIES if f in have]
    font = QFont()
    if fams:
        font.setFamilies(fams)
    font.setPointSizeF(point_size)
    return font


def make_app(argv: list[str] | None = None) -> QApplication:
    """The QApplication (reused when one exists) with names for QSettings, the font, the style
    sheet and pyqtgraph's options; Qt's harmless offscreen-plugin warnings are filtered out."""
    filter_qt_noise()
    QCoreApplication.setOrganizationName("TraceExplorer")
    QCoreApplication.setApplicationName("Trace Explorer")
    app = QApplication.instance() or QApplication(argv or [sys.argv[0]])
    font, sheet = app_font(), style_sheet()
    if app.font() != font:  # setting either again re-polishes every widget alive
        app.setFont(font)
    if app.styleSheet() != sheet:
        app.setStyleSheet(sheet)
    import pyqtgraph as pg
    pg.setConfigOptions(antialias=True, background="w", foreground="#333333")
    from explorer.widgets import paint_guard
    paint_guard.install()  # a chart item whose paint() raises must not crash the window
    return app


def style_sheet() -> str:
    try:
        sheet = importlib_resources.files("explorer.resources").joinpath("style.qss")
        return sheet.read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        return ""


def install_excepthook(window=None, interactive: bool = True) -> None:
    """Write every uncaught exception (slots included) to the error log and, when
    interactive, say in a dialog what failed and where the details are (no traceback for the
    user); the app keeps running."""
    from explorer.core import errlog

    def hook(etype, value, tb):
        if value is None:
            value = etype()
        value.__traceback__ = tb
        where = errlog.record(value, "uncaught exception in the window")
        if interactive and window is not None and QApplication.instance() is not None:
            box = QMessageBox(QMessageBox.Icon.Warning, _("Unexpected error"),
                              _("Something went wrong; the window keeps running.\n\n{error}")
                              .format(error=f"{errlog.describe(value)}\n\n{where}"), parent=window)
            box.setModal(False)
            box.show()
    sys.excepthook = hook


def _warm_imports() -> None:
    """Import the window's heavy Qt-free modules (pandas, DuckDB via the session's store)."""
    try:
        import explorer.session  # noqa: F401 - pandas, duckdb
    except Exception:  # noqa: BLE001 - the main thread imports again and reports it
        pass


def run_app(args) -> int:
    """Open the window, load args.files / --demo / --session, and run the event loop (or, with
    --screenshot, save the window to PNG once every panel has its result and exit 0)."""
    from explorer.core import errlog
    errlog.configure_logging(os.environ.get("TRACE_EXPLORER_LOG", "WARNING"))
    # pandas, DuckDB and pyqtgraph import in a thread while Qt builds the application (font
    # database, style): PySide6 releases the GIL in C++, so the two overlap (~0.2 s saved)
    warm = threading.Thread(target=_warm_imports, name="warm-imports", daemon=True)
    warm.start()
    app = make_app()
    warm.join()
    from explorer.session import Session
    from explorer.widgets.mainwindow import MainWindow

    shot = getattr(args, "screenshot", None)
    settings = QSettings()
    from explorer import translators
    translators.install(translators.chosen_language(getattr(args, "lang", None),
                                                    None if shot else settings), app)
    if shot:  # a screenshot is always the default layout, not the user's last one
        settings = QSettings(os.devnull, QSettings.Format.IniFormat)
    session = Session()
    window = MainWindow(session, settings)
    size = parse_size(getattr(args, "size", None))
    if size and not shot:
        window.resize(size[0], size[1])
    install_excepthook(window, interactive=not shot)
    window.show()

    def start():
        if getattr(args, "session", None):
            session.open_session(args.session)
        files = list(getattr(args, "files", []) or [])
        if files:
            window.load(files)
        if getattr(args, "version_overrides", None):  # queued after the load (one worker)
            session.apply_version_overrides(args.version_overrides)
        if getattr(args, "demo", False):
            session.load_demo()
    if not shot:
        stopped = _stop_on_signals(window)
        recovered = _take_recovery() if not getattr(args, "session", None) else None
        if recovered:
            args.session = str(recovered)
            log.warning("reopening the session saved when the last window was stopped: %s",
                        recovered)
        QTimer.singleShot(0, start)
        session.runner.idle.connect(lambda: log.info(
            "window idle: %d inputs", len(session.data.get("inputs") or [])))
        rc = app.exec()
    else:
        rc, stopped = _screenshot(app, window, session, shot, start, size or SCREENSHOT_SIZE), {}
    if stopped.get("signal"):  # SIGTERM / SIGINT / SIGHUP: the session is kept, then exit
        left = shutdown(window, EXIT_WAIT_MS)
        rc = _save_recovery(session, left, stopped["signal"])
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)  # the worker still running (if one is) must not hold the exit
    if not shutdown(window, EXIT_WAIT_MS):
        # a job still runs (a long query that cannot be interrupted): its result would be
        # dropped anyway, and an in-memory store has nothing to flush; a session being saved
        # keeps its previous file (saves are atomic). Exit now rather than hang.
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    return rc


def recovery_path():
    """Where a window stopped by a signal saves its session: beside the error log
    ($XDG_STATE_HOME/trace-explorer/recovery/session.duckdb)."""
    from explorer.core import errlog
    return errlog.log_path().parent / "recovery" / "session.duckdb"


def _take_recovery():
    """The session a signalled window saved, moved aside (reopened-<time>.duckdb, kept) so
    that it is reopened once; None when there is none."""
    import time
    p = recovery_path()
    if not p.is_file():
        return None
    kept = p.with_name(time.strftime("reopened-%Y%m%d-%H%M%S.duckdb"))
    try:
        p.replace(kept)
    except OSError:
        return p
    return kept


def _stop_on_signals(window) -> dict:
    """SIGTERM, SIGINT and SIGHUP close the window (run_app then saves the session, see
    _save_recovery). Python runs a signal handler only between bytecodes, and the Qt event
    loop runs none while idle: signal.set_wakeup_fd writes to a socket a QSocketNotifier
    watches, so the loop wakes and the handler runs. Returns the state {"signal": signum}."""
    import signal
    import socket
    from PySide6.QtCore import QSocketNotifier
    state: dict = {}
    rsock, wsock = socket.socketpair()
    for sock in (rsock, wsock):
        sock.setblocking(False)
    try:
        signal.set_wakeup_fd(wsock.fileno())
    except ValueError:  # not the main thread (a test): no signal reaches this window
        return state
    notifier = QSocketNotifier(rsock.fileno(), QSocketNotifier.Type.Read, window)
    notifier.activated.connect(lambda *_: rsock.recv(64))
    state["keep"] = (rsock, wsock, notifier)

    def handler(signum, _frame):
        if "signal" not in state:
            state["signal"] = signum
            QTimer.singleShot(0, window.close)
            QTimer.singleShot(0, QApplication.instance().quit)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, handler)
    return state


def _save_recovery(session, idle: bool, signum: int) -> int:
    """After a signal closed the window: save the store (what was loaded, the choices kept
    with a session) to recovery_path() atomically, say where on stderr; 143 / 130 / 129.
    A load under way was cancelled (its file rolled back, the files before it kept); a job
    still running has its DuckDB query interrupted first."""
    import signal
    from explorer.core.i18n import _
    rc = 128 + int(signum)
    store = session.store
    local = store.local if getattr(store, "remote", False) else store
    try:
        if not idle:
            from explorer.workers import shutdown_all
            local.con.interrupt()
            shutdown_all(session.runners(), 5000)
        if not local.count("inputs"):
            print(_("trace-explorer: interrupted; nothing was loaded, nothing to save"),
                  file=sys.stderr)
            return rc
        if session.cluster:
            from explorer.session import CLUSTER_SETTING
            local.set_setting(CLUSTER_SETTING, session.cluster)
        path = recovery_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        local.save_as(path)
    except Exception as e:  # noqa: BLE001 - say why and exit: the signal asked for it
        from explorer.core import errlog
        print(_("trace-explorer: interrupted; the session could not be saved: {error}")
              .format(error=errlog.describe(e)), file=sys.stderr)
        return rc
    what = {signal.SIGTERM: "SIGTERM", signal.SIGINT: "SIGINT", signal.SIGHUP: "SIGHUP"}.get(
        signum, str(signum))
    print(_("trace-explorer: interrupted ({signal}); the session was saved to {path}: the "
            "next trace-explorer reopens it").format(signal=what, path=path), file=sys.stderr)
    return rc


EXIT_WAIT_MS = 500  # after the window closed (it already waited CLOSE_WAIT_MS): < 2 s in all


def shutdown(window, msecs: int = 60000) -> bool:
    """After the event loop: stop every runner of the window for good (cancel, drop queued
    jobs, wait up to msecs in all for the running ones, disconnect), so no worker thread
    emits into deleted objects while Python tears the window down. False when a job still runs."""
    from explorer.workers import shutdown_all
    return shutdown_all(window.runners(), msecs)


def parse_size(text: str | None) -> tuple[int, int] | None:
    """'1366x768' -> (1366, 768); None -> None. Raises ValueError for anything else."""
    if not text:
        return None
    w, sep, h = text.lower().partition("x")
    if not sep or not w.strip().isdigit() or not h.strip().isdigit() or int(w) < 320 or int(h) < 240:
        from explorer.core.i18n import _
        raise ValueError(_("--size wants WIDTHxHEIGHT of at least 320x240, e.g. 1366x768 (got {text})")
                         .format(text=repr(text)))
    return int(w), int(h)


def _screenshot(app, window, session, path: str, start, size=SCREENSHOT_SIZE) -> int:
    state = {"rc": 0}
    window.resize(*size)
    window.fit_layout()

    def save():
        from explorer.core.i18n import _
        timer.stop()
        if (window.width(), window.height()) != size and not state.get("resized"):
            # the offscreen platform (an 800x800 screen) may shrink the window while docks
            # settle: a screenshot is always at the size asked for, in that size's layout
            state["resized"] = True
            window.resize(*size)
            window.fit_layout()
            QTimer.singleShot(300, save)
            return
        app.processEvents()
        img = window.grab()
        if not img.save(path):
            print(_("trace-explorer: cannot write {path}").format(path=path), file=sys.stderr)
            state["rc"] = 1
        else:
            print(_("trace-explorer: saved {path} ({width}x{height})").format(
                path=path, width=img.width(), height=img.height()))
        # like the other commands: name every input that failed and exit non-zero
        failed = [r.error for r in session.data.get("inputs") or [] if getattr(r, "error", None)]
        for text in failed + session.errors:
            print(_("trace-explorer: failed: {error}").format(error=text), file=sys.stderr)
        if failed or session.errors:
            state["rc"] = 1
        window.close()
        app.quit()

    def check():
        if session.runner.pending() == 0:
            QTimer.singleShot(300, save)  # let the last repaint land
            timer.stop()
    timer = QTimer()
    timer.setInterval(100)
    timer.timeout.connect(check)
    QTimer.singleShot(0, start)
    QTimer.singleShot(200, timer.start)
    QTimer.singleShot(SCREENSHOT_TIMEOUT_S * 1000, save)
    app.exec()
    return state["rc"]
