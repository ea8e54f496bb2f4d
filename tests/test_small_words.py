"""Small words the reports and panels print (issue 18): intervals whose ends never read alike,
no '-0.0%', counts without decimals."""
from __future__ import annotations

from explorer.core.fmt import interval as fmt_interval


def test_an_interval_never_prints_the_same_number_twice():
    assert fmt_interval(0.36, 0.38) == "0.36 to 0.38"
    assert fmt_interval(0.3712, 0.3748) == "0.371 to 0.375"   # one more decimal, not 0.37 to 0.37
    assert fmt_interval(0.37, 0.37) == "0.37, zero width"
    assert fmt_interval(None, 0.4) == "–"
    assert fmt_interval(0.370001, 0.370002) == "0.37, narrower than the last digit shown"


def test_an_interval_of_a_metric_reads_with_its_unit_and_still_never_repeats():
    """The what-if headline's interval of an outcome metric (num: 3 significant digits and
    the unit) follows the same rule: more digits until the ends differ."""
    assert fmt_interval(18.1, 19.2, metric="tpot_ms") == "18.1 ms/token to 19.2 ms/token"
    assert fmt_interval(18.31, 18.34, metric="tpot_ms") == "18.31 ms/token to 18.34 ms/token"
    assert fmt_interval(0.3712, 0.3748, metric="kv_cache_hit_rate") == "0.371 to 0.375"


def test_an_interval_of_large_values_gains_decimals():
    """num writes 100 and more whole ("1,904 ms"): the ends that differ only after the point
    gain decimals there, not "1,904 ms, narrower than the last digit shown"."""
    assert fmt_interval(1904.2, 1904.4, metric="e2e_ms") == "1,904.2 ms to 1,904.4 ms"
    assert fmt_interval(1904.21, 1904.24, metric="e2e_ms") == "1,904.21 ms to 1,904.24 ms"
    assert fmt_interval(123.41, 123.44, metric="e2e_ms") == "123.41 ms to 123.44 ms"
    assert fmt_interval(1904.2, 1911.8, metric="e2e_ms") == "1,904 ms to 1,912 ms"  # as before
    assert fmt_interval(1904.2, 1904.2, metric="e2e_ms") == "1,904 ms, zero width"
    assert fmt_interval(1904.20001, 1904.20002, metric="e2e_ms") == \
        "1,904 ms, narrower than the last digit shown"


def test_the_whatif_headline_writes_its_interval_by_that_rule():
    from explorer.core import i18n
    from explorer.widgets.painters.whatif import headline
    w = {"outcome": "badcase", "observed_outcome": 1.0, "n_selected": 23,
         "scenario": {"set": {"kv_cache_hit_rate": 0.67}, "predicted_outcome": 0.373,
                      "ci_low": 0.3712, "ci_high": 0.3748}}
    assert "(95% CI 0.371 to 0.375)" in headline(w)
    w["scenario"].update(ci_low=0.5, ci_high=0.5)
    assert "(95% CI 0.50, zero width)" in headline(w)
    i18n.set_language("zh_CN")
    try:
        w["scenario"].update(ci_low=0.3712, ci_high=0.3748)
        assert "95% 置信区间 0.371 至 0.375" in headline(w)
    finally:
        i18n.set_language("en")


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

