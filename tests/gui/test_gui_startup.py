"""Start-up: the window opens without importing scikit-learn or DoWhy (they load lazily inside
the analyses), and a real X window opens under Xvfb."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import sys, time
t0 = time.perf_counter()
from explorer.app import make_app
from explorer.session import Session
from explorer.widgets.mainwindow import MainWindow
from PySide6.QtCore import QSettings
import os
app = make_app()
w = MainWindow(Session(), QSettings(os.devnull, QSettings.Format.IniFormat))
w.show()
app.processEvents()
heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'dowhy'))
print('HEAVY', heavy)
print('SHOWN_S', time.perf_counter() - t0)
"""


def test_startup_does_not_import_sklearn_or_dowhy():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    heavy_line = next(line for line in out.stdout.splitlines() if line.startswith("HEAVY"))
    assert heavy_line == "HEAVY []", heavy_line


IDLE_PROBE = PROBE + r"""
from explorer.core import preload
from explorer.widgets.mainwindow import PRELOAD_AFTER_MS
end = time.perf_counter() + PRELOAD_AFTER_MS / 1000 + 0.5
while time.perf_counter() < end:  # the window up, nothing loaded
    app.processEvents()
    time.sleep(0.01)
preload.preload().join(60)  # the thread the window started (a later call returns it)
print('IDLE', [m for m in ('scipy.stats', 'sklearn.tree') if m in sys.modules])
"""


def test_a_window_left_idle_imports_the_analyses_libraries():
    """Opened, the window imports none of scikit-learn (above); shown PRELOAD_AFTER_MS with
    nothing loaded, it imports scipy.stats and sklearn.tree on a thread of its own, so a drop
    after that does not pay them (issue 17, drop to dashboard)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-c", IDLE_PROBE], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "HEAVY []" in lines
    assert "IDLE ['scipy.stats', 'sklearn.tree']" in lines


@pytest.mark.xvfb
def test_real_x_window_under_xvfb(tmp_path):
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (the project's setup installs it)")
    rfd, wfd = os.pipe()
    # -displayfd: Xvfb picks a free display itself and writes its number once it is ready
    server = subprocess.Popen([xvfb, "-displayfd", str(wfd), "-screen", "0", "1600x1000x24",
                               "-nolisten", "tcp"], pass_fds=(wfd,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(wfd)
    try:
        with os.fdopen(rfd) as r:
            display = r.readline().strip()
        assert display.isdigit(), "Xvfb did not report a display"
        env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
        env.update(DISPLAY=f":{display}", QT_QPA_PLATFORM="xcb")
        png = tmp_path / "x.png"
        out = subprocess.run([sys.executable, "-m", "explorer", "--screenshot", str(png)], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        from PySide6.QtGui import QImage
        img = QImage(str(png))
        assert img.width() >= 1200 and img.height() >= 800
        # a real window drew something: menu text and panels differ from the background
        colours = {img.pixel(x, y) for x in range(0, img.width(), 37) for y in range(0, img.height(), 23)}
        assert len(colours) > 3
    finally:
        server.terminate()
        server.wait(10)


def test_screenshot_names_failed_inputs_and_exits_non_zero(tmp_path, real):
    """Like inspect and report: a bad file is named on stderr, the good ones still load and
    the window is still saved (at the --size asked for), and the exit code says something
    failed."""
    import struct
    bad = tmp_path / "broken.json"
    bad.write_text('{"ttfts": [0.1, ')
    good = real / "every_eval_ever" / "samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl"
    png = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-m", "explorer", str(bad), str(good), "--screenshot",
                          str(png), "--size", "1366x768"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 1
    assert "broken.json" in out.stderr and "Traceback" not in out.stderr
    assert png.stat().st_size > 10_000
    assert struct.unpack(">II", png.read_bytes()[16:24]) == (1366, 768)  # the PNG's IHDR


def test_size_option_is_checked_and_the_window_fits_the_screen(app):
    from PySide6.QtCore import QSize

    from explorer.app import parse_size
    from explorer.widgets.mainwindow import fit_size
    assert parse_size("2560x1440") == (2560, 1440) and parse_size(None) is None
    for bad in ("1366", "wide x tall", "100x100"):
        with pytest.raises(ValueError):
            parse_size(bad)
    out = subprocess.run([sys.executable, "-m", "explorer", "--size", "big"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "WIDTHxHEIGHT" in out.stderr
    # a 1366x768 laptop (minus a 30 px panel): the default 1600x1000 window is shrunk to it
    assert fit_size((1600, 1000), QSize(1366, 738)) == QSize(1350, 698)
    assert fit_size((1600, 1000), QSize(2560, 1400)) == QSize(1600, 1000)
    assert fit_size((1600, 1000), None) == QSize(1600, 1000)  # no real screen (offscreen)


def test_qt_offscreen_noise_is_filtered_and_other_messages_pass(app, qtlog):
    """The offscreen platform's size-hint warning is not shown to users (make demo, reports);
    every other Qt message still reaches the previous handler."""
    from PySide6.QtCore import qWarning

    from explorer.app import make_app
    make_app()
    qWarning("This plugin does not support propagateSizeHints()")
    qWarning("a real warning")
    texts = [r.message for r in qtlog.records]
    assert "a real warning" in texts
    assert "This plugin does not support propagateSizeHints()" not in texts


def test_every_panel_has_a_go_to_shortcut_and_inputs_failures_stay_in_sight(window):
    """View > Go to panel gives each panel its own key; the status bar keeps the count of
    files that could not be read (a message would be replaced by the analyses' progress)."""
    from types import SimpleNamespace

    go = next(sub.menu() for top in window.menuBar().actions() if top.menu()
              for sub in top.menu().actions() if sub.menu() and "Go to panel" in sub.text())
    keys = [a.shortcut().toString() for a in go.actions()]
    assert len(keys) == len([n for n in window.docks if n != "header"])
    assert all(keys) and len(set(keys)) == len(keys)
    window._show_inputs_status([SimpleNamespace(error=None, skipped_file=None),
                                SimpleNamespace(error="x.json: truncated", skipped_file=None),
                                SimpleNamespace(error=None, skipped_file="not a trace")])
    assert window.inputs_status.text() == "1 file loaded · 1 could not be read · 1 ignored"


def test_qt_message_filter_survives_a_handler_that_forwards_back_to_it(app, capfd):
    """A handler installed after ours that forwards to ours, then ours installed again in front
    of it (a second make_app): a message goes round once and is printed, never forever."""
    import sys

    from PySide6.QtCore import qInstallMessageHandler, qWarning

    from explorer.app import filter_qt_noise
    filter_qt_noise()
    calls = []
    before = None

    def other(mode, ctx, msg):
        calls.append(msg)
        if len(calls) > 20:
            raise SystemExit("forwarded forever")
        if before is not None:
            before(mode, ctx, msg)
    before = qInstallMessageHandler(other)
    filter_qt_noise()
    try:
        qWarning("round trip")
    finally:
        qInstallMessageHandler(None)
        sys.stderr.flush()
    assert calls == ["round trip"]
    assert "round trip" in capfd.readouterr().err
