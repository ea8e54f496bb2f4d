"""The report's replay section is bounded in time (explorer.core.replay.section.REPLAY_BUDGET_S):
past the budget it stops where it is and the report says what was left out and why, instead of
spending minutes (a 30,000-request trace took ~285 s); the user's Cancel still cancels."""
import pytest

from explorer.core.analysis import Cohort
from explorer.core.errors import Cancelled

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def mooncake_store(real, tmp_path):
    from explorer.core.store import Store
    src = (real / "mooncake" / "synthetic_trace.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "synthetic_400.jsonl"
    path.write_text("".join(src[:400]))
    s = Store()
    s.load_file(path)
    yield s
    s.close()


class _Clock:
    def __init__(self):
        self.t = 1000.0

    def monotonic(self):
        return self.t


def test_a_spent_budget_stops_the_sweep_between_points_and_says_so(mooncake_store, monkeypatch):
    from explorer.core.replay import section
    clock = _Clock()
    monkeypatch.setattr(section, "time", clock)
    monkeypatch.setattr(section, "REPLAY_BUDGET_S", 150.0)
    real = section.simulate_replicas

    def slow(*a, **k):  # each replay "takes" 100 s
        r = real(*a, **k)
        clock.t += 100.0
        return r
    monkeypatch.setattr(section, "simulate_replicas", slow)
    d = section.replay_section(mooncake_store, Cohort())
    sw = d["sweep"]
    assert len(sw["rows"]) == 2, sw  # 0 s and 100 s started within 150 s, 200 s did not
    assert "budget" in sw["stopped"] and "150 s" in sw["stopped"]
    assert "2 of " in sw["stopped"] and " capacities swept, the other " in sw["stopped"], sw["stopped"]
    from explorer.core.report import _md_sweep
    assert "Stopped:" in _md_sweep(sw) and "budget" in _md_sweep(sw)


def test_no_budget_left_leaves_the_sweep_out_with_the_reason(mooncake_store, monkeypatch):
    from explorer.core.replay import section
    monkeypatch.setattr(section, "REPLAY_BUDGET_S", -1.0)
    d = section.replay_section(mooncake_store, Cohort())
    assert d["sweep"]["status"] == "no_data" and "budget" in d["sweep"]["reason"], d["sweep"]


def test_the_users_cancel_still_cancels(mooncake_store):
    from explorer.core.replay import section
    with pytest.raises(Cancelled):
        section.replay_section(mooncake_store, Cohort(), cancelled=lambda: True)
