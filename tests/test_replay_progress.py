"""The report's replay section states its bound and shows its progress (issue 36, Deliver 4):
past a small budget report.json and report.md say where it stopped ("stopped after N s ...",
k of m capacities swept) and the sample it replayed (the first n of N requests), each number
recomputed here; its progress (seconds used of the budget) never falls, reaches the CLI's
progress line on a terminal and the window's bar through the export child; Ctrl+C during the
replay ends as "interrupted" with the previous report intact."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.core.analysis import Cohort

pytestmark = pytest.mark.timeout(300)


def _head(real, tmp_path, n: int | None = None) -> Path:
    src = (real / "mooncake" / "synthetic_trace.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "synthetic.jsonl"
    path.write_text("".join(src if n is None else src[:n]))
    return path


#: how much faster than the wall the replay section's clock runs in the budget test
CLOCK_SCALE = 4.0


class _ScaledClock:
    """time.monotonic, CLOCK_SCALE times faster (only the section's budget reads it)."""

    def __init__(self, scale: float):
        self.scale = scale

    def monotonic(self) -> float:
        return time.monotonic() * self.scale


@pytest.fixture
def store_of():
    from explorer.core.store import Store
    stores = []

    def make(path):
        s = Store()
        s.load_file(path)
        stores.append(s)
        return s
    yield make
    for s in stores:
        s.close()


def test_past_a_small_budget_the_stop_and_the_sample_are_stated(real, tmp_path, store_of,
                                                                monkeypatch):
    from explorer.core.replay import section
    from explorer.core.report import write_report
    path = _head(real, tmp_path)
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    store = store_of(path)
    # each capacity of the sweep replays 2,000 requests (~0.15 s of CPU here, 0.6 s on the
    # section's clock, which runs CLOCK_SCALE times faster so that the stop does not depend on
    # the machine's speed): 5 of them exceed 1 s
    clock = _ScaledClock(CLOCK_SCALE)
    monkeypatch.setattr(section, "time", clock)
    monkeypatch.setattr(section, "REPLAY_BUDGET_S", 1.0)
    monkeypatch.setattr(section, "SWEEP_MAX_REQUESTS", 2000)
    told, sections_told = [], []
    t0 = clock.monotonic()
    write_report(store, Cohort(), tmp_path / "out", ["json", "md"], whatif=False,
                 progress=lambda d, n, k: sections_told.append(k),
                 detail=lambda k, d, n, text: told.append((k, d, n, text)))
    wall = clock.monotonic() - t0
    doc = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    r = doc["replay"]
    b = r["budget"]
    assert b["seconds"] == 1.0 and 1.0 <= b["elapsed_s"] <= wall + 0.1, (b, wall)
    note = b["stopped"]
    assert note.startswith("stopped after ") and "1 s budget" in note, note
    sw = r["sweep"]
    assert sw["stopped"] == note  # the one stop, said where it happened
    # the sample: the first 2,000 requests of the file's lines
    assert sw["requests"] == 2000 and sw["requests_total"] == len(lines) == 3993
    k, m, rest = map(int, re.search(r"(\d+) of (\d+) capacities swept, the other (\d+)",
                                    note).groups())
    assert k == len(sw.get("rows") or []) and k + rest == m and rest >= 1, (note, sw)
    secs = int(re.search(r"stopped after (\d+) s", note).group(1))
    assert 1 <= secs <= b["elapsed_s"] + 0.5
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"Bounded to 1 s of wall time; it ran out ({b['elapsed_s']:.0f} s used)" in md
    assert "capacities swept, the other" in md and "stopped after" in md
    if k:  # the sweep's table and its sample, as in the JSON
        assert "the first 2,000 of 3,993" in md
    # progress: the section's own, seconds of its budget, never falling, within it
    mine = [(d, n) for key, d, n, _t in told if key == "replay"]
    assert len(mine) >= 2 and {n for _d, n in mine} == {1}
    assert all(a <= b_ for (a, _), (b_, _) in zip(mine, mine[1:])) and mine[-1][0] <= 1
    assert any("sweeping" in t for key, _d, _n, t in told if key == "replay")
    # the sections' own progress is unchanged: each once, in order
    assert sections_told.count("replay") == 1 and sections_told[-1] == "done"


def test_within_the_budget_the_bound_is_stated_and_nothing_left_out(real, tmp_path, store_of):
    from explorer.core.report import write_report
    store = store_of(_head(real, tmp_path, 300))
    told = []
    write_report(store, Cohort(), tmp_path / "out", ["json", "md"], whatif=False,
                 detail=lambda k, d, n, text: told.append((d, n)))
    doc = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    b = doc["replay"]["budget"]
    assert b["stopped"] is None and b["seconds"] == 60.0 and 0 <= b["elapsed_s"] < 60
    assert len(doc["replay"]["sweep"]["rows"]) == 5 and "stopped" not in doc["replay"]["sweep"]
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"Bounded to 60 s of wall time; {b['elapsed_s']:.0f} s used, nothing left out." in md
    assert told and all(a <= c for (a, _), (c, _) in zip(told, told[1:]))
    assert {n for _d, n in told} == {60}


class _Tty:
    def __init__(self):
        self.parts = []

    def isatty(self):
        return True

    def write(self, s):
        self.parts.append(s)

    def flush(self):
        pass

    def getvalue(self):
        return "".join(self.parts)


def test_the_cli_shows_the_replay_progress_on_a_terminal(real, tmp_path, monkeypatch):
    from explorer.cli import progress as cli_progress
    from explorer.__main__ import main
    from explorer.core.replay import section
    tty = _Tty()
    made = []
    real_cls = cli_progress.ReportProgress

    def on_tty(stream=None):
        made.append(real_cls(tty))
        return made[-1]
    monkeypatch.setattr(cli_progress, "ReportProgress", on_tty)
    monkeypatch.setattr(section, "REPLAY_BUDGET_S", 1.0)
    monkeypatch.setenv("COLUMNS", "300")
    rc = main(["report", str(_head(real, tmp_path)), "--no-whatif", "--format", "json",
               "--out", str(tmp_path / "out")])
    assert rc == 0
    shown = tty.getvalue()
    assert re.search(r"\rreport 12/18: Replay: sweeping \S+: capacity 1 of \d+ .*of at most 1 s",
                     shown), shown[-2000:]
    assert shown.endswith("\r") and made[0]._width == 0  # erased at the end
    # a narrow terminal: one row, the detail's end (its numbers) kept
    line = made[0]
    line.at = (11, 18, "replay")
    narrow = line.text("sweeping a:b: capacity 1 of 5 (7,908 KV blocks): 1 of at most 1 s", 60)
    assert len(narrow) == 60 and narrow.startswith("report 12/18: Replay: …"), narrow
    assert "1 of at most 1 s, " in narrow
    # off a terminal: nothing drawn
    plain = real_cls(open(os.devnull, "w"))
    plain.section(0, 3, "replay")
    assert plain._width == 0


def test_the_window_bar_moves_inside_the_replay_and_never_back(tmp_path):
    """File > Export Report's child: its progress lines put the replay's own progress inside
    the replay section's share of the bar."""
    from explorer.demo import load_demo
    from explorer.core.store import Store
    from explorer.reporting.export import PER_SECTION, export_report
    store = Store()
    load_demo(store, n_requests=400)
    steps = []
    try:
        export_report(store, Cohort(), tmp_path / "out", ["json"],
                      progress=lambda d, t, s: steps.append((d, t, s)))
    finally:
        store.close()
    dones = [d for d, _t, _s in steps]
    assert dones == sorted(dones) and steps[-1][0] == steps[-1][1]
    assert {t for _d, t, _s in steps} == {steps[-1][1]} and steps[-1][1] % PER_SECTION == 0
    inside = [s for d, _t, s in steps if d % PER_SECTION or s.startswith("Replay: ")]
    assert any(s.startswith("Replay: ") and "of at most 60 s" in s for s in inside), steps


def test_ctrl_c_during_the_replay_says_interrupted_and_keeps_the_previous_report(real, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text('{"previous": true}')
    (out / "mine.txt").write_text("the user's")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    p = subprocess.Popen([sys.executable, "-m", "explorer", "report", "--no-whatif", "--timings",
                          "--format", "json,md", "--out", str(out),
                          str(real / "mooncake" / "conversation_trace.jsonl")],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    err = []
    for line in p.stderr:  # "timing engine ..." is printed as the replay section starts
        err.append(line)
        if line.startswith("timing engine"):
            break
    else:
        pytest.fail("".join(err))
    time.sleep(1.0)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    rest, _ = p.communicate(timeout=120)[1], None
    latency = time.monotonic() - t0
    text = "".join(err) + rest
    assert p.returncode == 130, text
    assert "interrupted" in text and "Traceback" not in text and "timing replay" not in text
    assert latency < 5, latency  # the replay polls for it every ~0.1 s (docs/faults.md)
    assert {q.name: q.read_bytes() for q in out.iterdir()} == before
