"""whatif.memo: the same frame content and arguments are estimated once (the report export,
the What-if panel and a cohort visited again share it); anything that changes the estimate
(a value of the frame, the scenario, the selected cases) is a new estimate; a run that raises
is not kept."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis.whatif import memo


@pytest.fixture
def calls():
    memo.forget()
    seen = []

    def run(frame, set_value=None, selected=None, progress=None, cancelled=None):
        seen.append((float(frame["x"].sum()), set_value,
                     None if selected is None else int(np.asarray(selected).sum())))
        if set_value == "boom":
            raise ValueError("no estimate")
        return {"estimate": float(frame["x"].mean()) + (set_value or 0)}
    yield run, seen
    memo.forget()


def test_same_content_and_arguments_are_estimated_once(calls):
    run, seen = calls
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    a = memo.remembered(run, frame, set_value=0.5, progress=lambda d, n: None)
    b = memo.remembered(run, frame.copy(), set_value=0.5, cancelled=lambda: False)
    assert a is b and a == {"estimate": 2.5} and len(seen) == 1


def test_what_changes_the_estimate_is_a_new_estimate(calls):
    run, seen = calls
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    memo.remembered(run, frame, set_value=0.5)
    memo.remembered(run, frame, set_value=0.6)                                  # the scenario
    memo.remembered(run, frame.assign(x=[1.0, 2.0, 4.0]), set_value=0.5)        # a value
    memo.remembered(run, frame, set_value=0.5, selected=pd.Series([True, False, True]))
    memo.remembered(run, frame, set_value=0.5, selected=pd.Series([True, True, False]))
    assert len(seen) == 5


def test_a_run_that_raises_is_not_kept_and_the_cache_is_bounded(calls):
    run, seen = calls
    frame = pd.DataFrame({"x": [1.0]})
    for _ in range(2):
        with pytest.raises(ValueError):
            memo.remembered(run, frame, set_value="boom")
    assert len(seen) == 2
    for v in range(memo.SIZE + 3):
        memo.remembered(run, frame, set_value=float(v))
    assert len(memo._CACHE) == memo.SIZE


def test_an_estimate_is_remembered_per_language(calls):
    """Its sentences are translated when it is made: a Chinese report after an English one in
    the same process must not get the English estimate (seen: the What-if text of a zh_CN
    report in English after an English report)."""
    from explorer.core import i18n
    run, seen = calls
    frame = pd.DataFrame({"x": [1.0, 2.0]})
    before = i18n.language()
    try:
        i18n.set_language("en")
        memo.remembered(run, frame, set_value=0.5)
        i18n.set_language("zh_CN")
        memo.remembered(run, frame, set_value=0.5)
        memo.remembered(run, frame, set_value=0.5)      # the Chinese one, remembered
    finally:
        i18n.set_language(before)
    assert len(seen) == 2
