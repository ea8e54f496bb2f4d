"""Small words the reports and panels print (issue 18): intervals whose ends never read alike,
no '-0.0%', counts without decimals."""
from __future__ import annotations

from explorer.core.fmt import interval as fmt_interval


def test_an_interval_never_prints_the_same_number_twice():
    assert fmt_interval(0.36, 0.38) == "0.36 to 0.38"
    assert fmt_interval(0.3712, 0.3748) == "0.371 to 0.375"   # one more decimal, not 0.37 to 0.37
    assert fmt_interval(0.37, 0.37) == "0.37, zero width"
    assert fmt_interval(None, 0.4) == "–"


def test_calibration_error_is_never_minus_zero():
    from explorer.core.replay.compare import calibration_lines
    cal = {"ttft_ms": {"observed": 2199.2, "replayed": 2199.19, "error": -0.00001,
                       "p90_error": -0.0002},
           "before": {"ttft_ms": {"error": -0.00003}}, "step_time": "default"}
    line = calibration_lines(cal)[0]
    assert "-0.0%" not in line and "error +0.0%" in line and "P90 error +0.0%" in line


def test_timeline_token_counts_read_as_counts():
    from explorer.core.report import _md_timeline
    t = {"request_id": "r", "run_id": "x", "preemptions": [], "phases": [],
         "metrics": {"prompt_tokens": 131072.0, "completion_tokens": 22.0, "tpot_ms": 17.7}}
    out = _md_timeline(t)
    assert "| 131,072 | 22 |" in out and "22.0" not in out

