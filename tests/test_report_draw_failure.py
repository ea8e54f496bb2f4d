"""A plotting library failing while a report picture is drawn (pyqtgraph raising inside a
panel's paint): the other files are written, no picture is left truncated, the user reads one
line naming the missing pictures and the log, and `report` exits non-zero."""
from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_END = b"IEND\xaeB`\x82"


@pytest.fixture
def broken_pyqtgraph(monkeypatch, tmp_path):
    """The distributions panel's pyqtgraph drawing raises, and writing the tree's PNG stops
    half-way (a full disk: part of the file written, then ENOSPC); the error log under
    tmp_path."""
    import errno
    import explorer.widgets.distributions
    monkeypatch.setenv("TRACE_EXPLORER_LOG_FILE", str(tmp_path / "log" / "te.log"))

    def paint(*a, **k):
        raise RuntimeError("pyqtgraph failed while painting")
    monkeypatch.setattr(explorer.widgets.distributions, "paint_distribution", paint)
    real_write = Path.write_bytes

    def write_bytes(self, data):
        if "tree" in self.name and ".png" in self.name:
            real_write(self, data[:18])  # a truncated file, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real_write(self, data)
    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    return tmp_path / "log" / "te.log"


def _whole_pictures(out: Path) -> list[str]:
    """Names of the pictures in `out`, each checked complete (PNG end chunk, SVG end tag);
    no temporary file left."""
    from explorer.core.atomic import MANIFEST
    assert not [p.name for p in out.iterdir()
                if (p.name.startswith(".") and p.name != MANIFEST) or p.suffix == ".tmp"]
    names = []
    for p in sorted(out.glob("*.png")):
        data = p.read_bytes()
        assert data.startswith(PNG_SIGNATURE) and data.endswith(PNG_END), p
        names.append(p.name)
    for p in sorted(out.glob("*.svg")):
        assert p.read_text(encoding="utf-8").rstrip().endswith("</svg>"), p
        names.append(p.name)
    return names


def test_render_writes_the_others_and_names_the_missing_pictures(broken_pyqtgraph, tmp_path):
    from explorer.core.errors import ReportIncomplete
    from explorer.reporting.bundle import render
    from tests.report_fixture import sample_doc, sample_frame

    out = tmp_path / "out"
    with pytest.raises(ReportIncomplete) as got:
        render(sample_doc(), out, {"png", "svg"}, frame=sample_frame())
    err = got.value
    why = dict(err.failed)
    assert set(why) == {"distributions", "tree"}, err.failed
    assert "pyqtgraph failed while painting" in why["distributions"]
    assert "cannot write" in why["tree"] and "tree.png" in why["tree"]
    assert "the disk is full" in why["tree"], why["tree"]
    assert str(broken_pyqtgraph) in str(err) and "Traceback" not in str(err)
    assert "pyqtgraph failed while painting" in broken_pyqtgraph.read_text()
    names = _whole_pictures(out)
    assert not {"distributions.png", "distributions.svg", "tree.png"} & set(names)
    assert {"comparison.png", "comparison.svg", "dashboard.png"} <= set(names)
    assert {p.name for p in err.written} == set(names)


def test_report_command_exits_non_zero_with_one_line(broken_pyqtgraph, tmp_path, capsys):
    from explorer.__main__ import main

    out = tmp_path / "out"
    rc = main(["report", *_inputs(tmp_path), "--out", str(out), "--format", "json,png",
               "--no-whatif", "--no-replay"])
    stdout, stderr = capsys.readouterr()
    assert rc == 1, (stdout, stderr)
    assert "Traceback" not in stdout + stderr and 'File "' not in stderr
    assert "could not be drawn" in stderr and str(broken_pyqtgraph) in stderr, stderr
    assert str(out / "report.json") in stdout  # what was written is still listed
    assert (out / "report.json").is_file()
    _whole_pictures(out)


def _inputs(tmp_path: Path) -> list[str]:
    trace = tmp_path / "trace.csv"
    trace.write_text("request_id,arrival_s,prompt_tokens,completion_tokens,ttft_ms,tpot_ms\n" + "".join(
        f"g{i},{1700000000 + i},{100 + i},{20 + i},{50 + 9 * (i % 3)},{10 + i % 4}\n"
        for i in range(24)))
    evals = tmp_path / "eval.csv"
    evals.write_text("case_id,correct,category,request_id,cluster,prompt\n" + "".join(
        f"c{i},{'false' if i % 3 == 0 else 'true'},maths,g{i},"
        f"{'slow' if i % 3 == 0 else ''},question {i}\n" for i in range(24)))
    return [str(trace), str(evals)]


def test_a_full_disk_leaves_no_truncated_report_and_says_so(tmp_path):
    """`report` in a process that may write no file beyond 2 KiB (RLIMIT_FSIZE: writes fail
    with EFBIG as on a full disk): one line naming the output folder, exit 1, no traceback,
    and no truncated report.json / report.md left behind."""
    import os
    import resource
    import signal
    import subprocess
    import sys

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
           "TRACE_EXPLORER_LOG_FILE": str(tmp_path / "te.log"), "QT_QPA_PLATFORM": "offscreen"}
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "explorer", "report", *_inputs(tmp_path),
                           "--out", str(out), "--format", "json,md", "--no-whatif",
                           "--no-replay", "--lang", "en"],
                          cwd=root, env=env, preexec_fn=limit, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and 'File "' not in done.stderr, done.stderr
    assert f"{out}: cannot write the report" in done.stderr, done.stderr
    assert "File too large" in done.stderr, done.stderr
    left = sorted(p.name for p in out.iterdir())
    assert not [n for n in left if n.startswith(".") or n.endswith(".tmp")], left
    assert "report.json" not in left  # beyond 2 KiB: not written, and not left half-written
    if "report.md" in left:  # small enough to fit: then whole
        assert (out / "report.md").read_text(encoding="utf-8").endswith("\n")


def test_the_export_dialog_reads_one_line_not_the_childs_traceback(tmp_path, monkeypatch):
    """File > Export Report into a folder that cannot be created (a file has its name): the
    child process fails, the window gets one line naming the folder and the cause, with no
    traceback (the child's details go to the error log)."""
    from explorer.core.analysis import Cohort
    from explorer.core.store import Store
    from explorer.reporting.export import ExportFailed, export_report

    monkeypatch.setenv("TRACE_EXPLORER_LOG_FILE", str(tmp_path / "te.log"))
    store = Store()
    assert all(r.error is None for r in store.load_paths(_inputs(tmp_path)))
    blocked = tmp_path / "report"
    blocked.write_text("a file where the folder should go")
    with pytest.raises(ExportFailed) as got:
        export_report(store, Cohort(cluster="slow"), blocked / "out", ["json", "md"])
    msg = str(got.value)
    assert "\n" not in msg and "Traceback" not in msg and 'File "' not in msg, msg
    assert msg.startswith(str(blocked / "out")) and "cannot write" in msg, msg
    assert blocked.read_text() == "a file where the folder should go"



def test_a_panel_slot_raising_on_the_results_is_blamed_on_that_panel_alone(monkeypatch, tmp_path):
    """What a panel's slot raises while the results are handed out reaches sys.excepthook,
    not the caller: that panel's picture is left out and named, the others are drawn."""
    import explorer.widgets.heatmap
    from explorer.core.errors import ReportIncomplete
    from explorer.reporting.bundle import render
    from tests.report_fixture import sample_doc, sample_frame
    monkeypatch.setenv("TRACE_EXPLORER_LOG_FILE", str(tmp_path / "te.log"))
    real = explorer.widgets.heatmap.HeatmapPanel.on_results

    def on_results(self, payload):
        real(self, payload)
        raise RuntimeError("slot failed")
    monkeypatch.setattr(explorer.widgets.heatmap.HeatmapPanel, "on_results", on_results)
    out = tmp_path / "out"
    with pytest.raises(ReportIncomplete) as got:
        render(sample_doc(), out, {"png", "svg"}, frame=sample_frame())
    assert got.value.failed == [("heatmap", "RuntimeError: slot failed")]
    names = _whole_pictures(out)
    assert not {"heatmap.png", "heatmap.svg"} & set(names)
    assert {"comparison.png", "comparison.svg", "tree.png"} <= set(names)
    # versions has no data in the sample ("only one engine version"): its sentence is text in
    # the report, not a picture of it
    assert "versions.png" not in names


@pytest.fixture
def curve_paint_raises(monkeypatch, tmp_path):
    """pyqtgraph's PlotCurveItem.paint raises (a value the library cannot draw); the
    renderer's application (ensure_app) guards it as the window's (make_app) does. Without the
    guard this crashed the process (PySide6 6.11 leaves the error set and the next override Qt
    calls segfaults), so a regression fails the run."""
    import pyqtgraph as pg
    monkeypatch.setenv("TRACE_EXPLORER_LOG_FILE", str(tmp_path / "te.log"))

    def paint(self, p, *args):
        raise RuntimeError("curve cannot be drawn")
    monkeypatch.setattr(pg.PlotCurveItem, "paint", paint)


def test_a_chart_item_raising_in_paint_leaves_only_its_picture_out(curve_paint_raises, tmp_path):
    from explorer.core.errors import ReportIncomplete
    from explorer.reporting.bundle import render
    from tests.report_fixture import sample_doc, sample_frame

    out = tmp_path / "out"
    with pytest.raises(ReportIncomplete) as got:
        render(sample_doc(), out, {"png"}, frame=sample_frame())
    why = dict(got.value.failed)
    assert set(why) == {"distributions"}, got.value.failed  # the one panel drawing curves
    assert why["distributions"] == "RuntimeError: curve cannot be drawn"
    names = _whole_pictures(out)
    assert "distributions.png" not in names
    assert {"comparison.png", "tree.png", "dashboard.png"} <= set(names)


def test_a_chart_item_raising_in_paint_is_reported_once_and_the_rest_drawn(curve_paint_raises,
                                                                            monkeypatch):
    """In the window: the failing item is handed to sys.excepthook once (not on every
    repaint), draws nothing, and the scene's other items are still drawn."""
    import sys

    import pyqtgraph as pg
    from PySide6.QtGui import QColor

    from explorer.reporting.images import ensure_app, settle, to_image
    from PySide6.QtCore import QSize
    ensure_app()
    assert getattr(pg.PlotCurveItem.paint, "paint_guarded", False)
    seen = []
    monkeypatch.setattr(sys, "excepthook", lambda t, e, tb: seen.append(e))
    from PySide6.QtWidgets import QVBoxLayout, QWidget
    w = QWidget()  # a panel holding a chart, as the window's are
    plot = pg.PlotWidget()
    QVBoxLayout(w).addWidget(plot)
    plot.plot([0, 1, 2], [0, 1, 0])  # a PlotCurveItem: raises
    plot.addItem(pg.ScatterPlotItem([1], [0.5], size=40, brush="r", pen=None))
    plot.setXRange(0, 2, padding=0)
    plot.setYRange(0, 1, padding=0)
    settle(w, QSize(200, 150))
    images = [to_image(w, 1.0) for _ in range(3)]
    assert [str(e) for e in seen] == ["curve cannot be drawn"]
    img = images[-1]
    red = [(x, y) for x in range(0, img.width(), 2) for y in range(0, img.height(), 2)
           if QColor(img.pixel(x, y)).red() > 200 and QColor(img.pixel(x, y)).green() < 60]
    assert red, "the scatter beside the failing curve was not drawn"
    w.close()
    w.deleteLater()


def test_the_window_application_guards_every_chart_item():
    import pyqtgraph as pg

    from explorer.app import make_app
    make_app()
    for cls in (pg.PlotCurveItem, pg.ScatterPlotItem, pg.ImageItem, pg.BarGraphItem,
                pg.AxisItem, pg.TextItem, pg.InfiniteLine, pg.LinearRegionItem):
        paint = next(c.__dict__["paint"] for c in cls.__mro__ if "paint" in c.__dict__)
        assert getattr(paint, "paint_guarded", False), cls
