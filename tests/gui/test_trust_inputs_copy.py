"""Issue 33, smaller items: the Inputs panel's Ctrl+C keeps why a file was ignored (it dropped
the reasons the panel shows)."""
from __future__ import annotations


def test_copy_keeps_the_ignore_reason(window, qtbot, tmp_path):
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "notes.txt").write_text("meeting notes, not a trace\n")
    (folder / "bench.csv").write_text("request_id,ttft_ms,tpot_ms\nr1,10,2\nr2,12,3\n")
    s = window.session
    window.load([str(folder)])
    qtbot.waitUntil(lambda: len(s.data.get("inputs") or []) >= 2 and s.runner.pending() == 0,
                    timeout=60000)
    panel = window.panels["inputs"]
    ignored = [r for r in s.data["inputs"] if getattr(r, "skipped_file", None)]
    assert ignored
    text = panel.copy_text()
    for r in ignored:
        line = next(l for l in text.splitlines() if l.startswith(str(r.path)))
        assert f"ignored: {r.skipped_file}" in line
