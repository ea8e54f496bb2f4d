"""Fuzz suite: every class of bad input of issue #15 dropped together with good files, through
the store, `inspect`, `report` (tests/gui/test_fuzz_window.py: the window). Each front end
must name every bad file, load the good ones, print no traceback, leave every input file
byte-identical, and never hang (pytest-timeout bounds each test; a FIFO that was opened would
block it forever)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.__main__ import main
from explorer.core import pipeline
from tests.fuzz_inputs import GOOD_EVAL_ROWS, GOOD_TRACE_ROWS, dropped_inputs

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    """The dropped folder (tests/fuzz_inputs.dropped_inputs)."""
    yield from dropped_inputs(tmp_path, monkeypatch)


def _by_path(reports) -> dict[str, object]:
    return {r.path: r for r in reports}


def test_store_loads_the_good_files_and_names_every_bad_one(inputs, store):
    reports = store.load_paths([inputs.folder])
    got = _by_path(reports)
    for p in inputs.good:
        r = got[str(p)]
        assert r.error is None and r.rows_loaded > 0, r
    assert got[str(inputs.good[0])].rows_loaded == GOOD_TRACE_ROWS
    assert got[str(inputs.good[1])].rows_loaded == GOOD_EVAL_ROWS
    for kind, p in inputs.bad.items():
        r = got[str(p)]
        assert r.error and r.error.startswith(str(p)), (kind, r)
        assert "Traceback" not in r.error
    assert "nested too deeply" in got[str(inputs.bad["recursion"])].error
    assert "Permission denied" in got[str(inputs.bad["unreadable_folder"])].error
    # an unexpected exception's details went to the log named in the message
    msg = got[str(inputs.bad["recursion"])].error
    log = Path(msg.rsplit("details in ", 1)[1].rstrip(")"))
    assert log.is_file() and "Traceback" in log.read_text()
    for kind, p in inputs.special.items():
        r = got[str(p)]
        assert r.skipped_file and not r.error, (kind, r)
    assert "FIFO" in got[str(inputs.special["fifo"])].skipped_file
    assert "outside the folder" in got[str(inputs.special["link_outside"])].skipped_file
    # nothing from outside the folder, nothing twice through the loop links
    assert not any(str(inputs.outside.parent) in r.path for r in reports)
    assert not any("loop_" in r.path for r in reports)
    assert len(got) == len(reports)
    assert store.scalar("SELECT count(*) FROM requests WHERE request_id LIKE 's%'") == 0


def test_extreme_values_skip_their_row_and_never_poison_the_session(inputs, store):
    got = _by_path(store.load_paths([inputs.folder]))
    tr = got[str(inputs.skipping["extreme_trace"])]
    assert tr.error is None and tr.rows_loaded == 3 and tr.rows_skipped == 4, tr
    text = " | ".join(tr.skipped_reasons)
    for field in ("e2e_ms", "arrival_s", "ttft_ms", "tpot_ms"):
        assert f"field '{field}'" in text, text
    assert all(r.startswith("line ") for r in tr.skipped_reasons), tr.skipped_reasons
    ev = got[str(inputs.skipping["extreme_eval"])]
    assert ev.error is None and ev.rows_loaded == 2 and ev.rows_skipped == 1, ev
    assert ev.skipped_reasons[0].startswith("line 3: field 'timestamp_s'"), ev.skipped_reasons
    nul = got[str(inputs.skipping["nul"])]
    assert nul.error is None and nul.rows_loaded == 1 and nul.rows_skipped == 1, nul
    assert nul.skipped_reasons == ["line 2: a line of NUL bytes, not a JSON object"]
    finite = store.scalar("SELECT bool_and(isfinite(coalesce(e2e_ms, 0)) AND isfinite("
                          "coalesce(ttft_ms, 0)) AND abs(coalesce(arrival_s, 0)) < 1e11) FROM requests")
    assert finite is True
    pipeline.prepare(store)  # the binding SQL runs on what was kept
    again = store.load_paths([inputs.good[0].parent / "good_trace.csv"])  # a later load works
    assert again[0].error is None


def test_a_fifo_named_explicitly_is_refused_without_opening_it(inputs, store):
    r = store.load_file(inputs.special["fifo"])
    assert r.error and "FIFO" in r.error and r.error.startswith(str(inputs.special["fifo"]))


def test_cancel_rolls_back_the_file_being_read(inputs, store):
    """Cancel while the second file inserts rows: the first stays, the second is rolled back
    and its report says so, nothing after it is read."""
    state = {"cancel": False}

    def progress(i, n, path):
        state["cancel"] = i == 1  # the user presses Cancel while the second file loads
    files = [inputs.good[0], inputs.good[1], inputs.skipping["extreme_trace"]]
    reports = store.load_paths(files, progress=progress, cancelled=lambda: state["cancel"])
    assert [r.path for r in reports] == [str(f) for f in files[:2]]
    assert reports[0].error is None and reports[0].rows_loaded == GOOD_TRACE_ROWS
    assert "cancelled" in reports[1].error and "nothing of it was kept" in reports[1].error
    assert store.count("requests") == GOOD_TRACE_ROWS
    assert store.count("runs") == 1 and store.count("cases") == 0 and store.count("evals") == 0
    # the rolled-back file is listed with why, and can be loaded again
    assert [r.path for r in store.input_reports() if r.error] == [str(files[1])]
    assert store.load_file(files[1]).rows_loaded == GOOD_EVAL_ROWS


def _no_traceback(*texts: str) -> None:
    for t in texts:
        assert "Traceback" not in t and 'File "' not in t, t


def test_inspect_names_each_bad_file_and_describes_the_good_ones(inputs, capsys):
    rc = main(["inspect", str(inputs.folder)])
    out, err = capsys.readouterr()
    _no_traceback(out, err)
    assert rc == 1
    for p in inputs.bad.values():
        assert f"trace-explorer inspect: {p}" in err, (p, err)
    for p in inputs.good:
        assert f"\n{p}\n" in "\n" + out, out
    assert "ignored" in out and "FIFO" in out


def test_inspect_json_is_valid_with_every_class(inputs, capsys):
    rc = main(["inspect", "--json", str(inputs.folder)])
    out, err = capsys.readouterr()
    _no_traceback(out, err)
    doc = json.loads(out)
    assert rc == 1 and {f["path"] for f in doc["files"] if not f["error"]} >= {str(p) for p in inputs.good}


def test_report_is_written_from_the_good_files(inputs, tmp_path, capsys):
    out_dir = tmp_path / "out"
    rc = main(["report", str(inputs.folder), "--out", str(out_dir), "--format", "json,md",
               "--no-whatif"])
    out, err = capsys.readouterr()
    _no_traceback(out, err)
    assert rc == 1  # some inputs failed; the report is still written
    doc = json.loads((out_dir / "report.json").read_text())
    loaded = {i["path"] for i in doc["inputs"] if not i.get("error") and not i.get("ignored")}
    assert {str(p) for p in inputs.good} <= loaded
    for p in inputs.bad.values():
        assert f"failed: {p}" in err, (p, err)
    md = (out_dir / "report.md").read_text()
    assert "\x00" not in md


def test_cli_never_prints_a_traceback_for_an_internal_error(tmp_path, monkeypatch, capsys):
    """A fault outside the loaders (here the report writer) ends in one line naming the log."""
    monkeypatch.setenv("TRACE_EXPLORER_LOG_FILE", str(tmp_path / "te.log"))
    import explorer.core.report as report

    def boom(*a, **k):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(report, "write_report", boom)
    f = tmp_path / "t.csv"
    f.write_text("request_id,ttft_ms\na,1\n")
    rc = main(["report", str(f), "--out", str(tmp_path / "o"), "--format", "json"])
    out, err = capsys.readouterr()
    _no_traceback(out, err)
    assert rc == 2 and "nested too deeply" in err and str(tmp_path / "te.log") in err
    assert "Traceback" in (tmp_path / "te.log").read_text()
