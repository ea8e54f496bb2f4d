"""File > Export Report runs the report in a child process on a saved copy of the session:
the same bundle as the command line, nothing built on the window's worker thread."""
import json

import pytest

from explorer.core.analysis import Cohort
from explorer.reporting.export import ExportCancelled, export_report


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
    with pytest.raises(ExportCancelled):
        export_report(demo_store, Cohort(), tmp_path, ["json"], cancelled=lambda: True)
    assert not (tmp_path / "report.json").exists()
