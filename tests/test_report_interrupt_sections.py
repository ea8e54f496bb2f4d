"""A SIGTERM (e.g. `timeout`'s) that a running section swallows stops the report before the
next section, not after all of them: at 100M requests the report went on for 15 minutes after
`timeout 1500`'s SIGTERM, then wrote nothing (docs/files-in-place.md, issue 37)."""
from __future__ import annotations

import signal

from explorer.core import interrupt, sections


def test_a_swallowed_sigterm_stops_before_the_next_section(tmp_path, monkeypatch, capsys):
    from explorer.__main__ import main
    later = []

    def cohort_gets_sigterm(*a, **k):
        interrupt.SIGNALLED.append(signal.SIGTERM)  # what explorer.__main__'s handler records
        raise RuntimeError("a library caught the interrupt")  # the section fails instead

    monkeypatch.setattr(sections, "summarize_cohort", cohort_gets_sigterm)
    monkeypatch.setattr(sections, "compute_heatmap", lambda *a, **k: later.append("heatmap"))
    monkeypatch.setattr(sections, "compare_versions", lambda *a, **k: later.append("versions"))
    out = tmp_path / "rep"
    rc = main(["report", "--demo", "--no-whatif", "--no-replay", "--format", "json",
               "--out", str(out)])
    assert rc == 143
    assert later == []  # no section ran after the signal
    assert not (out / "report.json").exists()
    assert "interrupted" in capsys.readouterr().err
