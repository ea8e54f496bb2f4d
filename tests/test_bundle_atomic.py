"""A report is written as a bundle (explorer.core.atomic.Bundle): the user's own files in the
output folder are never touched, a full disk is named as such and leaves no partial file under
a final name, and an interruption (SIGTERM, Ctrl-C) leaves the previous report as it was."""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from explorer.core import atomic
from explorer.core.atomic import MANIFEST, Bundle, write_text
from explorer.core.report import write_build


@pytest.fixture(scope="module")
def demo_build():
    """A real report build of the demo (valid report.json), the replay and what-if left out."""
    from explorer.core.analysis import Cohort, default_cluster
    from explorer.core.report import build_report
    from explorer.core.store import Store
    from explorer.demo import load_demo
    store = Store()
    load_demo(store)
    from explorer.core import pipeline
    pipeline.prepare(store)
    b = build_report(store, Cohort(default_cluster(store), "same-category"),
                     {"replay": False}, False, whole_frame=True)
    yield b
    store.close()

pytestmark = pytest.mark.timeout(300)

USER_FILES = {"my_plot.svg": "<svg>mine</svg>", "notes.txt": "mine", "dashboard.old.png": "x",
              "report.json.bak": "mine"}


def _user_files(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for n, t in USER_FILES.items():
        (out / n).write_text(t)


def _assert_user_files_kept(out: Path) -> None:
    for n, t in USER_FILES.items():
        assert (out / n).read_text() == t, n


def _no_leftovers(out: Path) -> None:
    assert not [p.name for p in out.iterdir()
                if p.name.startswith(".") and p.name != MANIFEST or p.suffix == ".tmp"]


def _snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def test_json_html_keeps_the_users_svg_and_other_files(demo_build, tmp_path, qapp):
    import explorer.reporting  # noqa: F401 - registers html
    out = tmp_path / "out"
    _user_files(out)
    written = write_build(demo_build, out, ["json", "html"])
    assert sorted(p.name for p in written) == ["report.html", "report.json"]
    _assert_user_files_kept(out)
    # the pictures drawn only for the HTML are gone, nothing else of ours is left
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*USER_FILES, MANIFEST, "report.html", "report.json"])
    _no_leftovers(out)


def test_a_second_report_replaces_only_the_first_reports_files(demo_build, tmp_path):
    out = tmp_path / "out"
    _user_files(out)
    write_build(demo_build, out, ["json", "md"])
    assert json.loads((out / MANIFEST).read_text())["files"] == ["report.json", "report.md"]
    write_build(demo_build, out, ["json"])  # the old report.md is the product's
    assert not (out / "report.md").exists() and (out / "report.json").is_file()
    _assert_user_files_kept(out)
    # a manifest pointing outside the folder is not followed
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (out / MANIFEST).write_text(json.dumps({"files": ["../victim.txt", "/etc/passwd", "notes.txt/"]}))
    write_build(demo_build, out, ["md"])
    assert victim.read_text() == "keep"
    _assert_user_files_kept(out)


def test_a_full_disk_is_named_and_keeps_the_previous_report(demo_build, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    _user_files(out)
    write_build(demo_build, out, ["json", "md"])
    before = _snapshot(out)
    real = Path.write_bytes

    def full(self, data):  # report.md's write: half of it reaches the disk, then ENOSPC
        if "report.md" in self.name:
            real(self, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, data)
    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(OSError) as got:
        write_build(demo_build, out, ["json", "md"])
    assert got.value.errno == errno.ENOSPC
    assert "the disk is full" in atomic.describe_os_error(got.value)
    assert _snapshot(out) == before  # old report.json too: the new one was only staged
    _no_leftovers(out)


def test_report_cli_says_the_disk_is_full(tmp_path, monkeypatch, capsys):
    from explorer.__main__ import main
    from explorer.core import report as core_report

    out = tmp_path / "out"
    _user_files(out)

    def full(doc, d):
        raise OSError(errno.ENOSPC, "No space left on device", str(d / "report.md"))
    monkeypatch.setitem(core_report.WRITERS, "md", full)
    rc = main(["report", "--demo", "--no-whatif", "--no-replay", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1 and "the disk is full" in err and "Traceback" not in err, err
    assert str(out / "report.md") in err and ".trace-explorer-partial" not in err, err
    assert not (out / "report.json").exists()  # staged only: no half bundle
    _assert_user_files_kept(out)
    _no_leftovers(out)


def test_sigterm_mid_report_leaves_the_previous_report(demo_build, tmp_path, monkeypatch, capsys):
    from explorer.__main__ import main
    from explorer.core import report as core_report

    out = tmp_path / "out"
    _user_files(out)
    write_build(demo_build, out, ["json", "md"])
    before = _snapshot(out)
    real_md = core_report.WRITERS["md"]

    def md_then_killed(doc, d):  # report.json is staged, report.md is being written
        real_md(doc, d)
        os.kill(os.getpid(), signal.SIGTERM)
    monkeypatch.setitem(core_report.WRITERS, "md", md_then_killed)
    rc = main(["report", "--demo", "--no-whatif", "--no-replay", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 143 and "interrupted" in err and "Traceback" not in err, err
    assert _snapshot(out) == before
    _no_leftovers(out)
    assert signal.getsignal(signal.SIGTERM) is not None  # the handler was put back


def test_ctrl_c_during_a_load_says_interrupted(tmp_path, monkeypatch, capsys):
    from explorer.__main__ import main
    from explorer.core import inspect as core_inspect

    f = tmp_path / "t.jsonl"
    f.write_text('{"request_id": "a", "ttft_ms": 1}\n')

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(core_inspect, "inspect_paths", interrupted)
    rc = main(["inspect", str(f)])
    err = capsys.readouterr().err
    assert rc == 130 and "interrupted" in err and "Traceback" not in err, err


def test_a_query_interrupted_inside_duckdb_stops_the_load(tmp_path, monkeypatch):
    """DuckDB turns Ctrl-C inside a query into InterruptException: the load stops as
    interrupted (not "cannot be read" and the next file on an aborted transaction)."""
    import duckdb
    from explorer.core.formats import generic_table
    from explorer.core.store import Store

    f = tmp_path / "t.jsonl"
    f.write_text('{"request_id": "a", "ttft_ms": 1}\n')

    def interrupted(*a, **k):
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
    monkeypatch.setattr(generic_table, "iter_jsonl", interrupted)
    store = Store()
    with pytest.raises(KeyboardInterrupt):
        store.load_paths([f, f])
    assert store.count("requests") == 0
    store.con.execute("SELECT 1")  # the connection is usable: no aborted transaction


def test_bundle_interrupted_before_commit_changes_nothing(tmp_path):
    out = tmp_path / "out"
    _user_files(out)
    before = _snapshot(out)
    with pytest.raises(KeyboardInterrupt):
        with Bundle(out) as b:
            write_text(b.stage / "report.json", "{}")
            raise KeyboardInterrupt
    assert _snapshot(out) == before
    _no_leftovers(out)


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (root only; skipped where mounting is not permitted)."""
    mnt = tmp_path / f"tiny-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                       capture_output=True, timeout=20)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode(errors='replace').strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, timeout=20)


def test_a_real_full_disk(tiny_disk, capsys):
    """The demo's report.json (~75 KiB) cannot fit in 64 KiB: the real ENOSPC is named, the
    user's file and the previous (small) report are kept, no partial file is left."""
    from explorer.__main__ import main
    out = tiny_disk / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "report.json").write_text("{\"old\": true}")
    (out / MANIFEST).write_text(json.dumps({"files": ["report.json"]}))
    rc = main(["report", "--demo", "--no-whatif", "--no-replay", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1 and "the disk is full" in err and "Traceback" not in err, err
    assert ".trace-explorer-partial" not in err, err
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "report.json").read_text() == "{\"old\": true}"
    assert not (out / "report.md").exists()
    _no_leftovers(out)


def test_out_of_memory_in_a_section_stops_with_a_clear_message(tmp_path, monkeypatch, capsys):
    """MemoryError (here raised by the replay section) is not a section's failure among others:
    the command stops with one line saying so and a non-zero exit, nothing half-written."""
    from explorer.__main__ import main
    from explorer.core.replay import section

    def oom(*a, **k):
        raise MemoryError()
    monkeypatch.setattr(section, "replay_section", oom)
    out = tmp_path / "out"
    rc = main(["report", "--demo", "--no-whatif", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 3 and "out of memory" in err and "Traceback" not in err, err
    assert not out.exists() or not any(p.name.startswith("report") for p in out.iterdir())


@pytest.mark.parametrize("sig,delay", [(signal.SIGINT, 0.3), (signal.SIGTERM, 2.5),
                                       (signal.SIGINT, 4.0)])
def test_a_real_signal_mid_report_keeps_the_previous_report(demo_build, tmp_path, sig, delay):
    """A real process, interrupted at some point of its run (imports, load, analysis, write):
    one "interrupted" line, exit 130 / 143, no traceback, the previous report byte-identical."""
    import sys
    import time
    out = tmp_path / "out"
    _user_files(out)
    write_build(demo_build, out, ["json", "md"])
    before = _snapshot(out)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    p = subprocess.Popen([sys.executable, "-m", "explorer", "report", "--demo", "--no-whatif",
                          "--no-replay", "--out", str(out)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(delay)
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    if p.returncode == 0:
        pytest.skip(f"the report finished within {delay} s: nothing to interrupt")
    assert p.returncode in (130, 143, -sig), (p.returncode, err)
    assert "Traceback" not in err, err
    if p.returncode > 0:
        assert "interrupted" in err, err
    assert _snapshot(out) == before
    _no_leftovers(out)


def test_render_into_a_users_folder_leaves_their_svgs(tmp_path, qapp):
    """render() called on a folder directly (no bundle): the SVGs beside the picture names
    that the user owns are not taken for the renderer's own."""
    from explorer.reporting.bundle import render
    from tests.report_fixture import sample_doc, sample_frame
    out = tmp_path / "out"
    out.mkdir()
    for n in ("tree.svg", "header.svg", "mine.svg"):
        (out / n).write_text("<svg>mine</svg>")
    render(sample_doc(), out, {"html"}, frame=sample_frame())
    for n in ("tree.svg", "header.svg", "mine.svg"):
        assert (out / n).read_text() == "<svg>mine</svg>", n
