"""File > Export Report runs the report in a child process on a saved copy of the session:
the same bundle as the command line, nothing built on the window's worker thread."""
import json

import pytest

from explorer.core.analysis import Cohort
from explorer.core.errors import Cancelled
from explorer.reporting.export import export_report


@pytest.fixture(scope="module")
def demo_store():
    from explorer.core.store import Store
    from explorer.demo import load_demo
    store = Store()
    load_demo(store, n_requests=400)
    return store


def test_export_writes_the_bundle_of_the_cohort(demo_store, tmp_path):
    cluster = demo_store.df("SELECT cluster FROM cases WHERE NOT correct GROUP BY cluster "
                            "ORDER BY count(*) DESC LIMIT 1")["cluster"][0]
    steps = []
    files = export_report(demo_store, Cohort(cluster=cluster), tmp_path, ["json", "md", "html"],
                          progress=lambda d, t, s: steps.append((d, t, s)))
    names = {p.name for p in files}
    assert {"report.json", "report.md", "report.html"} <= names
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    # the child saw the same data: its cohort counts equal the store's own
    n_bad = demo_store.df("SELECT count(*) AS n FROM cases WHERE NOT correct AND cluster = ?",
                          [cluster])["n"][0]
    assert doc["cohort"]["cluster"] == cluster and doc["cohort"]["badcases"] == n_bad
    assert steps and steps[-1][0] == steps[-1][1]


def test_cancel_kills_the_child(demo_store, tmp_path):
    with pytest.raises(Cancelled):
        export_report(demo_store, Cohort(), tmp_path, ["json"], cancelled=lambda: True)
    assert not (tmp_path / "report.json").exists()


def test_a_finished_whatif_goes_into_the_report_as_it_is(demo_store, tmp_path, monkeypatch):
    """The window hands the What-if panel's finished result to the exporting process: the
    report shows that result and the child never estimates (nor imports DoWhy) again."""
    from explorer.core.analysis import cohort_frame, whatif
    from explorer.reporting import export

    cluster = demo_store.df("SELECT cluster FROM cases WHERE NOT correct GROUP BY cluster "
                            "ORDER BY count(*) DESC LIMIT 1")["cluster"][0]
    cohort = Cohort(cluster=cluster)
    ready = whatif.run_whatif(cohort_frame(demo_store, cohort), refute=False).to_dict()
    db, res = tmp_path / "s.duckdb", tmp_path / "whatif.json"
    demo_store.save_as(db)
    res.write_text(json.dumps(ready), encoding="utf-8")

    def no_estimate(*a, **k):
        raise AssertionError("the export estimated the what-if again")
    monkeypatch.setattr(whatif, "run_whatif", no_estimate)
    out = tmp_path / "out"
    assert export.main([str(db), "--out", str(out), "--cohort", json.dumps(cohort.to_dict()),
                        "--format", "json,md", "--whatif-result", str(res)]) == 0
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert doc["whatif"] == json.loads(json.dumps(ready))
    assert "What-if" in (out / "report.md").read_text(encoding="utf-8")


def test_an_explorer_folder_in_the_working_directory_does_not_shadow_the_app(demo_store, tmp_path,
                                                                            monkeypatch):
    """`python -m` puts the working directory first on sys.path: the child must still import
    the app that exports, not a stray explorer/ folder where the user happens to be."""
    stray = tmp_path / "cwd" / "explorer"
    stray.mkdir(parents=True)
    (stray / "__init__.py").write_text("raise ImportError('the stray explorer package')\n")
    monkeypatch.chdir(tmp_path / "cwd")
    files = export_report(demo_store, Cohort(), "out", ["json"])
    assert [p.name for p in files] == ["report.json"]
    assert (tmp_path / "cwd" / "out" / "report.json").exists()


def test_the_whatif_of_a_selection_applies_to_the_selected_cases(demo_store):
    """The window's selection goes to the exported what-if as case ids: the scenario applies
    to those cases (n_selected), as in the What-if panel."""
    from explorer.core.analysis import cohort_frame
    from explorer.core.report import run_whatif_section

    cluster = demo_store.df("SELECT cluster FROM cases WHERE NOT correct GROUP BY cluster "
                            "ORDER BY count(*) DESC LIMIT 1")["cluster"][0]
    frame = cohort_frame(demo_store, Cohort(cluster=cluster))
    bound = frame[frame["request_id"].notna()]
    ids = bound["case_id"].head(40).tolist()
    res = run_whatif_section(frame, {"selected_case_ids": ids, "refute": False})
    assert res.to_dict()["n_selected"] == 40
    plain = run_whatif_section(frame, {"refute": False}).to_dict()
    assert plain["n_selected"] == int((bound["grp"] == "bad").sum())
