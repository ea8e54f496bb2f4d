"""The window and `trace-explorer report` run one pipeline (explorer.core.sections):
on the same inputs (the demo), every section the window shows equals the report JSON's, the
same numbers and the same reasons where a section has no data."""
from __future__ import annotations

import json
import math

from explorer.__main__ import main
from explorer.core.report import finite_doc
from explorer.session import ANALYSIS_KEYS, Failure


def _as_json(value):
    """A window payload as the report writes it: a Failure as its {status, reason}, values
    that are not finite as null, through JSON (tuples -> lists). The heatmap's cells of the
    cohort's cases are the window's own addition (the selection outline), left out."""
    if isinstance(value, Failure):
        value = {"status": "no_data" if value.nodata else "error", "reason": value.message}
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k != "case_cells"}
    return json.loads(json.dumps(finite_doc(value)[0], default=str))


def _agree(a, b, path="") -> list[str]:
    """Where two JSON documents differ: floats within 1e-9 relative count as equal, since
    DuckDB's parallel sums (the heatmap's batch-size entropy) vary in the last digits between
    two runs of one query; everything else exactly."""
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) else [f"{path}: {a} != {b}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a.keys() ^ b.keys())}"]
        return [d for k in a for d in _agree(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _agree(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def test_agree_tolerates_only_last_digit_float_noise():
    assert _agree({"e": [0.1 + 0.2, "x"]}, {"e": [0.3, "x"]}) == []
    assert _agree({"e": [0.31]}, {"e": [0.3]}) == [".e[0]: 0.31 != 0.3"]
    assert _agree({"e": ["x"]}, {"e": ["y"]}) and _agree({"a": 1}, {"b": 1})


def test_the_window_shows_what_report_writes(session, qtbot, tmp_path):
    session.load_demo()
    qtbot.waitUntil(lambda: session.cluster is not None and session.runner.pending() == 0
                    and all(k in session.data for k in ANALYSIS_KEYS), timeout=240000)
    assert session.errors == []
    cluster = session.cluster
    rc = main(["report", "--demo", "--cluster", cluster, "--out", str(tmp_path), "--format",
               "json", "--no-whatif", "--no-replay", "--lang", "en"])
    assert rc == 0
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert doc["cohort"]["cluster"] == cluster
    # the sections the window shows: the cohort's analyses and the engine statistics
    assert set(ANALYSIS_KEYS) == {"cohort", "comparison", "tree", "heatmap", "versions", "sla",
                                  "sla_diagnosis", "conclusion", "engine", "compare"}
    # report.json keeps the SLA over time inside `sla` (DESIGN: sla.windows, sla.diagnosis)
    over_time = {k: doc["sla"].pop(k) for k in ("windows", "diagnosis")}
    doc["sla_diagnosis"] = over_time
    shown = {key: _as_json(session.data[key]) for key in ANALYSIS_KEYS}
    # --no-replay: the report leaves out the worst period's replay, which the window runs
    assert over_time["diagnosis"].pop("replay") == {"status": "no_data", "reason": "not requested"}
    assert "verdict" in shown["sla_diagnosis"]["diagnosis"].pop("replay")
    for key in ANALYSIS_KEYS:
        assert _agree(shown[key], doc[key], key) == []
    # the demo has data for them all, so the comparison above is of numbers, not of reasons
    # (the engine statistics aside: the demo writes no engine log)
    assert [k for k in ANALYSIS_KEYS if "status" in doc[k]] == ["engine"]
    assert len(doc["comparison"]) >= 8 and doc["conclusion"]["modules"]
