"""Input names: siblings stay distinct, and long lists say how many are left out."""
from __future__ import annotations

from explorer.core.names import distinct_names, more


def test_siblings_in_other_folders_keep_the_folder_that_tells_them_apart():
    a = "/data/aibrix/ps_experiment_v0.2.1_20250323/naive_output_1.csv"
    b = "/data/aibrix/ps_experiment_v0.3.0_20250519/naive_output_1.csv"
    c = "/data/aibrix/ps_experiment_v0.3.0_20250519/prefix_output_1.csv"
    d = "/elsewhere/samples.jsonl"
    names = distinct_names([a, b, c, d])
    assert names == {a: "ps_experiment_v0.2.1_20250323/naive_output_1.csv",
                     b: "ps_experiment_v0.3.0_20250519/naive_output_1.csv",
                     c: "prefix_output_1.csv", d: "samples.jsonl"}
    assert len(set(names.values())) == 4


def test_every_aibrix_csv_gets_its_own_name(real):
    paths = sorted(str(p) for p in (real / "aibrix").rglob("*.csv"))
    assert len(paths) > 100
    names = distinct_names(paths)
    assert len(set(names.values())) == len(paths)
    assert all(not n.startswith("/") and len(n) < len(p) for p, n in names.items())


def test_more_names_how_many_are_left_out():
    assert more(["a", "b", "c"], 2) == "a, b and 1 more"
    assert more(["a", "b"], 6) == "a, b"
    assert more([str(i) for i in range(136)], 6).endswith("and 130 more")
