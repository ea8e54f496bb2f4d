"""The report's capacity sweep replays a bounded number of requests (issue 17: a report at
1M requests waited minutes on five whole-run replays), and says how many it left out."""
from explorer.core.analysis import Cohort


def test_sweep_replays_the_first_requests_and_counts_the_rest(real, tmp_path, monkeypatch):
    from explorer.core.replay import section
    from explorer.core.replay.io import requests_from_store
    from explorer.core.store import Store
    src = (real / "mooncake" / "synthetic_trace.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "synthetic_800.jsonl"
    path.write_text("".join(src[:800]))
    s = Store()
    s.load_file(path)
    monkeypatch.setattr(section, "SWEEP_MAX_REQUESTS", 300)
    d = section.replay_section(s, Cohort())
    run_id = d["sweep"]["run_id"]
    whole = requests_from_store(s, run_id)
    first = requests_from_store(s, run_id, limit=300)
    s.close()
    assert d["sweep"]["requests"] == 300 and d["sweep"]["requests_total"] == 800
    # the 300 replayed are the first by arrival, the same ones the whole trace starts with
    assert [r.request_id for r in first] == [r.request_id for r in whole[:300]]
    assert max(r.arrival_s for r in first) <= min(r.arrival_s for r in whole[300:])


def test_report_no_replay_skips_the_section_and_says_so(real, tmp_path):
    import json
    from explorer.__main__ import main
    src = (real / "mooncake" / "synthetic_trace.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "synthetic_300.jsonl"
    path.write_text("".join(src[:300]))
    docs = {}
    for flag in ([], ["--no-replay"]):
        out = tmp_path / ("skip" if flag else "full")
        assert main(["report", str(path), "--out", str(out), "--format", "json,md",
                     "--no-whatif", *flag]) == 0
        docs[bool(flag)] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert docs[True]["replay"] == {"status": "no_data", "reason": "not requested"}
    assert docs[False]["replay"]["sweep"]["requests"] == 300
    assert "not requested" in (tmp_path / "skip" / "report.md").read_text(encoding="utf-8")
