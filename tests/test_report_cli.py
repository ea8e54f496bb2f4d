"""`trace-explorer report`: JSON keys of the DESIGN contract, Markdown, format dispatch, and the
real-file stories (aibrix releases compared; MMLU-Pro 8B alone with no trace bound)."""
import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from explorer.__main__ import main
from explorer.core import report as core_report
from explorer.core.analysis import Cohort

DESIGN_KEYS = ("cohort", "comparison", "tree", "heatmap", "versions", "sla", "whatif",
               "conclusion", "inputs")


@pytest.fixture
def planted(store):
    rng = np.random.default_rng(1)
    n = 200
    bad = rng.random(n) < 0.25
    ids = [f"q{i}" for i in range(n)]
    store.add_run("r", engine_version="1.0", benchmark="b")
    store.append("requests", pd.DataFrame({
        "run_id": "r", "request_id": ids, "kv_cache_hit_rate": np.where(bad, 0.2, 0.7) + rng.normal(0, .1, n),
        "num_preemptions": rng.poisson(np.where(bad, 2, .2)), "ttft_ms": rng.exponential(300, n),
        "tpot_ms": rng.normal(30, 5, n), "arrival_s": np.arange(n) * 0.3}))
    store.append("cases", pd.DataFrame({"case_id": ids, "category": "alg", "correct": ~bad,
                                        "cluster": np.where(bad, "sign | errors", None)}))
    store.append("case_links", pd.DataFrame({"case_id": ids, "run_id": "r", "request_id": ids, "level": 1}))
    return store


def test_report_has_every_design_key_and_no_nan(planted, tmp_path):
    paths = core_report.write_report(planted, Cohort("sign | errors"), tmp_path, ["json", "md"],
                                     whatif=False)
    assert [p.name for p in paths] == ["report.json", "report.md"]
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    for k in DESIGN_KEYS:
        assert k in doc
    assert set(doc["cohort"]) >= {"cluster", "category", "badcases", "share_of_badcases", "bound",
                                  "binding_rate", "control", "link_levels"}
    for row in doc["comparison"]:
        assert set(row) >= {"metric", "bad_mean", "control_mean", "diff_pct", "p_value",
                            "p_adjusted", "cohens_d", "n_bad", "n_control"}
    assert set(doc["tree"]) >= {"max_depth", "baseline_error_rate", "nodes"}
    assert set(doc["tree"]["nodes"][0]) >= {"id", "parent", "feature", "threshold", "side", "n",
                                            "error_rate", "is_leaf"}
    assert set(doc["sla"]) >= {"thresholds", "attainment", "by"}
    assert set(doc["conclusion"]) >= {"modules", "narrative", "suggestions"}
    # no batch_size in this trace: the heatmap says why; what-if was not asked for
    assert doc["heatmap"]["status"] == "no_data" and "batch_size" in doc["heatmap"]["reason"]
    assert doc["whatif"]["status"] == "no_data"
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    for h in ("## Cohort", "## Metric comparison", "## Decision tree", "## Engine versions",
              "## SLA attainment", "## Conclusion", "## Inputs"):
        assert h in md
    assert "sign \\| errors" in md  # table cells escape the pipe
    assert "_No data:" in md and "batch_size" in md


def test_format_dispatch(monkeypatch, tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown report format 'docx'"):
        core_report.check_formats(["json", "docx"])
    import explorer.reporting  # noqa: F401 - registered once, on import
    assert set(core_report.available_formats()) == set(core_report.KNOWN_FORMATS)
    monkeypatch.setattr(core_report, "_RENDERERS", [])  # a build without the Qt renderer
    assert core_report.available_formats() == ["json", "md"]
    with pytest.raises(core_report.FormatUnavailable, match="format pdf not available"):
        core_report.check_formats(["json", "pdf"])
    rc = main(["report", "--demo", "--out", str(tmp_path), "--format", "json,png"])
    assert rc == 2 and "format png not available" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # checked before any work


def test_bad_input_names_the_file(tmp_path, capsys):
    bad = tmp_path / "broken.json"
    bad.write_text("{ not json")
    rc = main(["report", str(bad), "--out", str(tmp_path / "out")])
    assert rc == 1 and "broken.json" in capsys.readouterr().err
    rc = main(["report", "--out", str(tmp_path / "out")])
    assert rc == 2


def _aibrix_raw(real):
    rows = []
    for f in sorted(real.glob("aibrix/ps_experiment_v0.*/naive_output_*.csv")):
        version = re.search(r"_v(\d+\.\d+\.\d+)_", f.parent.name).group(1)
        qps = f.stem.split("_")[-1]
        df = pd.read_csv(f)
        rows.append(pd.DataFrame({"version": version, "qps": float(qps), "ttft_ms": df["ttft"] * 1000}))
    return pd.concat(rows)


def test_aibrix_releases_compared(real, tmp_path):
    files = sorted(str(p) for p in real.glob("aibrix/ps_experiment_v0.*/naive_output_*.csv"))
    assert len(files) == 22
    rc = main(["report", *files, "--out", str(tmp_path), "--format", "json,md", "--no-whatif"])
    assert rc == 0
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert doc["versions"]["versions"] == ["0.2.1", "0.3.0"]
    raw = _aibrix_raw(real)
    ttft = [c for c in doc["versions"]["all_changes"] if c["metric"] == "ttft_ms"]
    assert len(ttft) == 11  # one per request rate, the same benchmark on both releases
    for c in ttft:
        qps = float(c["benchmark"].rsplit("/", 1)[1])
        old = raw[(raw.version == "0.2.1") & (raw.qps == qps)].ttft_ms.dropna().to_numpy()
        new = raw[(raw.version == "0.3.0") & (raw.qps == qps)].ttft_ms.dropna().to_numpy()
        assert (c["from_version"], c["to_version"]) == ("0.2.1", "0.3.0")
        assert c["from_value"] == pytest.approx(old.mean()) and c["to_value"] == pytest.approx(new.mean())
        assert c["change_pct"] == pytest.approx((new.mean() - old.mean()) / old.mean() * 100)
        assert c["p_value"] == pytest.approx(stats.mannwhitneyu(old, new).pvalue, rel=1e-6)
        assert c["regression"] == (c["p_adjusted"] < 0.05 and c["change_pct"] >= 5)
    assert any(c["regression"] for c in ttft)
    # the "changes" list is capped (a chart / table can show it), most significant first
    top = doc["versions"]["changes"]
    assert len(doc["versions"]["all_changes"]) > 12 and len(top) == 12
    assert top == doc["versions"]["all_changes"][:12]
    assert doc["versions"]["changes_total"] == len(doc["versions"]["all_changes"])
    # traces only: the cohort says why, the SLA is computed per release and per tenant
    assert doc["cohort"]["status"] == "no_data" and "no eval cases" in doc["cohort"]["reason"]
    assert [r["key"] for r in doc["sla"]["by"]["version"]] == ["0.2.1", "0.3.0"]
    assert len(doc["sla"]["by"]["tenant"]) > 10
    assert len(doc["inputs"]) == 22 and all(i["sha256"] for i in doc["inputs"])
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "0.2.1 → 0.3.0" in md and "**REGRESSION**" in md


def test_mmlu_pro_alone_compares_cases_and_says_no_trace(real, tmp_path):
    f = real / "mmlu_pro_outputs" / "Meta-Llama-3_1-8B-Instruct_mmlu_hs_college_math.json"
    rc = main(["report", str(f), "--out", str(tmp_path), "--format", "json,md"])
    assert rc == 0
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    raw = pd.DataFrame(json.loads(f.read_text(encoding="utf-8")))
    raw["wrong"] = raw["pred"] != raw["answer"]
    by_cat = raw[raw.wrong].groupby("src").size().sort_values(ascending=False)
    assert [(c["cluster"], c["badcases"]) for c in doc["clusters"]] == list(by_cat.items())
    top = by_cat.index[0]
    coh = doc["cohort"]
    assert coh["cluster"] == top and coh["badcases"] == by_cat.iloc[0]
    assert coh["bound"] == 0 and "no trace" in coh["note"]
    rows = {r["metric"]: r for r in doc["comparison"]}
    bad = raw[raw.wrong & (raw.src == top)]
    ctrl = raw[~raw.wrong & (raw.src == top)]
    for metric, col in (("prompt_chars", "question"), ("prediction_chars", "generated_text")):
        b = bad[col].str.len().to_numpy(float)
        c = ctrl[col].str.len().to_numpy(float)
        r = rows[metric]
        assert (r["n_bad"], r["n_control"]) == (len(b), len(c))
        assert r["bad_mean"] == pytest.approx(b.mean()) and r["control_mean"] == pytest.approx(c.mean())
        assert r["p_value"] == pytest.approx(stats.mannwhitneyu(b, c).pvalue)
    assert "kv_cache_hit_rate" not in rows
    for sec in ("tree", "versions", "sla", "whatif"):
        assert doc[sec]["status"] == "no_data", sec
    assert "no trace" in doc["conclusion"]["narrative"]
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "no trace is bound" in md


def test_whatif_arguments_pass_through(planted, monkeypatch, tmp_path):
    import argparse

    import explorer.core.analysis.whatif as whatif
    from explorer.cli import report as cli

    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    graph = tmp_path / "g.dot"
    graph.write_text("digraph { kv_cache_hit_rate -> badcase }")
    args = p.parse_args(["x", "--set", "kv_cache_hit_rate=0.67", "--outcome", "badcase",
                         "--graph", str(graph)])
    wa = cli._whatif_args(args)
    assert wa == {"treatment": "kv_cache_hit_rate", "outcome": "badcase", "set_value": 0.67,
                  "graph_text": graph.read_text()}
    with pytest.raises(ValueError, match="--set names"):
        cli._whatif_args(p.parse_args(["x", "--treatment", "ttft_ms", "--set", "tpot_ms=1"]))
    seen = {}

    class Fake:
        def to_dict(self):
            return {"treatment": "kv_cache_hit_rate", "estimate": -0.2}

    def fake_run(frame, **kw):
        seen["frame"], seen["kw"] = frame, kw
        return Fake()

    monkeypatch.setattr(whatif, "run_whatif", fake_run)
    doc = core_report.build_report(planted, Cohort("sign | errors"), whatif=wa).doc
    assert doc["whatif"] == {"treatment": "kv_cache_hit_rate", "estimate": -0.2}
    assert seen["kw"] == wa
    from explorer.core.analysis import cohort_frame
    pd.testing.assert_frame_equal(seen["frame"], cohort_frame(planted, Cohort("sign | errors")))


def test_whatif_paid_once_and_timed(planted, monkeypatch):
    """The what-if (DoWhy import + estimator + refuters) runs once per cohort content and
    arguments; progress reports it as a section of its own, as every other, then "done"."""
    import explorer.core.analysis.whatif as whatif
    calls = []

    class Fake:
        def to_dict(self):
            return {"estimate": -0.1}

    def fake_run(frame, **kw):
        calls.append(len(frame))
        return Fake()

    monkeypatch.setattr(whatif, "run_whatif", fake_run)
    seen = []
    cohort = Cohort("sign | errors")
    for _ in range(2):
        doc = core_report.build_report(planted, cohort, progress=lambda d, n, s: seen.append((d, n, s))).doc
        assert doc["whatif"] == {"estimate": -0.1}
    assert len(calls) == 1  # the second build reused the result
    names = [s for _, _, s in seen[:len(seen) // 2]]
    assert names == list(core_report.REPORT_KEYS) + ["done"]  # every section, in order
    assert all(n == len(names) - 1 for _, n, _ in seen)
    # other arguments (a scenario) are a new what-if
    core_report.build_report(planted, cohort, whatif={"set_value": 0.5})
    assert len(calls) == 2
    # a precomputed result (the GUI's) is used as is
    pre = Fake()
    assert core_report.build_report(planted, cohort, whatif=pre).results["whatif"] is pre
    assert len(calls) == 2


def test_timings_option(real, tmp_path, capsys):
    f = real / "mmlu_pro_outputs" / "Meta-Llama-3_1-8B-Instruct_mmlu_hs_college_math.json"
    rc = main(["report", str(f), "--out", str(tmp_path), "--timings"])
    assert rc == 0
    err = capsys.readouterr().err
    phases = re.findall(r"^timing (\S+)\s+([\d.]+) s$", err, re.M)
    assert [p for p, _ in phases] == ["load", "cohort_frame", "cohort", "comparison", "tree",
                                      "heatmap", "versions", "sla", "sla_diagnosis", "whatif", "conclusion",
                                      "inputs", "engine", "replay", "clusters", "runs",
                                      "run_versions", "compare", "timeline", "strata", "write",
                                      "total"]
    secs = dict((p, float(t)) for p, t in phases)
    assert secs["total"] >= max(v for k, v in secs.items() if k != "total")


def test_markdown_groups_many_inputs_by_folder():
    rows = [{"path": f"/d/{'a' if i % 3 else 'b'}/f{i}.csv", "format": "aibrix", "sha256": "0" * 64,
             "rows_loaded": i, "rows_skipped": i % 2, "error": None} for i in range(40)]
    rows.append({"path": "/d/a/broken.csv", "format": None, "sha256": None, "rows_loaded": 0,
                 "rows_skipped": 0, "error": "/d/a/broken.csv: no header"})
    md = core_report.render_markdown({"inputs": rows})
    sec = md[md.index("## Inputs"):]
    a = [r for r in rows[:40] if "/a/" in r["path"]]
    assert f"| /d/a/ ({len(a)} files) | aibrix | {sum(r['rows_loaded'] for r in a)} | " \
           f"{sum(r['rows_skipped'] for r in a)} |" in sec
    assert "broken.csv: no header" in sec and "41 files" in sec
    assert len(sec.splitlines()) < 12


def test_report_carries_the_timeline_of_the_worst_badcase(planted, tmp_path):
    """The worst badcase is the bound badcase with the most preemptions (then highest TPOT),
    picked here with pandas straight from the stored rows."""
    core_report.write_report(planted, Cohort("sign | errors"), tmp_path, ["json", "md"], whatif=False)
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    rows = planted.df("SELECT r.request_id, r.num_preemptions, r.tpot_ms FROM requests r "
                      "JOIN cases c ON c.case_id = r.request_id WHERE NOT c.correct")
    top = rows.sort_values(["num_preemptions", "tpot_ms"], ascending=False).iloc[0]
    assert doc["timeline"]["request_id"] == top["request_id"]
    assert doc["timeline"]["metrics"]["num_preemptions"] == top["num_preemptions"]
    assert "## Timeline of the worst badcase" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_markdown_escapes_input_text(planted, tmp_path):
    """A cluster name with markup (it comes from the input file) is text in report.md."""
    planted.execute("UPDATE cases SET cluster = '<img src=x onerror=alert(1)>' WHERE cluster IS NOT NULL")
    core_report.write_report(planted, Cohort("<img src=x onerror=alert(1)>"), tmp_path, ["md"],
                             whatif=False)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    from markdown_it import MarkdownIt
    assert "<img" not in MarkdownIt("commonmark").enable("table").render(md)
    assert "\\<img src=x onerror=alert(1)\\>" in md  # escaped with backslashes, no HTML entity
    assert "&lt;" not in md and "&gt;" not in md


def test_markdown_timeline_lists_the_phases_or_says_how_many_it_left_out():
    """QA: report.md listed 12 of 31 phases of the worst badcase without saying so."""
    from explorer.core.report import MD_TIMELINE_PHASES, _md_timeline
    t = {"request_id": "r", "run_id": "x", "preemptions": [],
         "phases": [{"kind": "decode", "start_ms": i, "duration_ms": 1} for i in range(31)]}
    assert _md_timeline(t).count("| decode") == 31
    t["phases"] *= 2
    out = _md_timeline(t)
    assert out.count("| decode") == MD_TIMELINE_PHASES
    assert f"The first {MD_TIMELINE_PHASES} of 62 phases" in out


def test_markdown_speaks_in_display_names_without_entities(planted, tmp_path):
    """report.md as a reader sees it: 'KV-cache hit rate', '< 0.001', 'preemptions ≥ 3'; never
    kv_cache_hit_rate, &lt; or a count compared with 2.5."""
    core_report.write_report(planted, Cohort("sign | errors"), tmp_path, ["json", "md"], whatif=False)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert "&lt;" not in md and "&gt;" not in md and "&amp;" not in md
    table = md[md.index("| Metric"):].split("\n\n")[0]
    assert "KV-cache hit rate" in table and "kv_cache_hit_rate" not in table
    assert "| < 0.001 |" in table  # the planted hit rate separates the groups
    tree = [n for n in doc["tree"]["nodes"] if n["parent"] is not None]
    for n in tree:
        par = next(p for p in doc["tree"]["nodes"] if p["id"] == n["parent"])
        if par["feature"] == "num_preemptions":
            k = int(par["threshold"] // 1)
            want = (("preemptions = 0" if k == 0 else f"preemptions ≤ {k}") if n["side"] == "le"
                    else f"preemptions ≥ {k + 1}")
            assert f"\\[{n['id']}\\] {want}:" in md
    assert "TTFT ≤ 500 ms" in md and "ttft_ms <=" not in md


def test_whatif_and_replay_sentences_use_display_names(planted, tmp_path):
    """QA: report.md's what-if method, warnings and assumptions said kv_cache_hit_rate and
    batch_size; every sentence of report.md names metrics as the panels do."""
    from explorer.core.names import LABELS
    planted.execute("UPDATE requests SET batch_size = 1 + hash(request_id) % 40, "
                    "prompt_tokens = 100 + hash(request_id || 'p') % 3000")
    planted.execute("UPDATE requests SET batch_size = NULL WHERE request_id IN ('q1', 'q2')")
    core_report.write_report(planted, Cohort("sign | errors"), tmp_path, ["json", "md"])
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert "estimate" in doc["whatif"], doc["whatif"]
    sec = md[md.index("## What-if"):md.index("## Replay")]
    assert "KV-cache hit rate" in sec and "missing batch size" in sec
    raw = [c for c in LABELS if "_" in c and c in md.replace("`", " ")]
    assert raw == [], raw
    assert "&lt;" not in md and "&gt;" not in md


def test_every_report_json_is_checked_against_the_committed_schema(planted, tmp_path):
    """resources/report.schema.json is the contract: the tests' json writer checks each
    report.json it writes (tests/conftest.py), and the schema rejects a report that breaks it."""
    from tests import report_schema
    assert getattr(core_report.WRITERS["json"], "checks_schema", False)
    core_report.write_report(planted, Cohort("sign | errors"), tmp_path, ["json"], whatif=False)
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report_schema.problems(doc) == []
    broken = json.loads(json.dumps(doc))
    broken["cohort"]["binding_rate"] = 1.5            # a share above 1
    broken["tree"]["nodes"][1]["side"] = "left"       # side is "le" or "gt"
    del broken["meta"]["engine"]                      # meta.engine is part of the contract
    broken.pop("sla")
    where = {p.split(":")[0] for p in report_schema.problems(broken)}
    assert where == {"cohort", "tree", "meta", "(top)"}
