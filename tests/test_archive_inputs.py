"""Compressed inputs read in place (explorer.core.archive): .gz / .zst decode to their inner
file, a .zip of an artefact folder loads its members; paths shown are the archive's; a broken
archive fails alone with its name. And a file nothing recognises says what was looked for and
what it resembles."""
from __future__ import annotations

import gzip
import json
import zipfile

import pytest

from explorer.core.store import Store
from tests.conftest import REAL

AIPERF = REAL / "aiperf_example"


@pytest.fixture
def aiperf():
    if not AIPERF.is_dir():
        pytest.skip("aiperf_example missing")
    return AIPERF


def test_gz_and_zst_load_as_their_inner_file(aiperf, tmp_path):
    import zstandard
    raw = (aiperf / "profile_export.jsonl").read_bytes()
    (tmp_path / "run1").mkdir()
    gz = tmp_path / "run1" / "profile_export.jsonl.gz"
    gz.write_bytes(gzip.compress(raw))
    zst = tmp_path / "profile_export_aiperf.json.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(
        (aiperf / "profile_export_aiperf.json").read_bytes()))
    store = Store()
    r = store.load_file(gz)
    assert r.error is None and r.format == "aiperf" and r.rows_loaded == 100
    assert r.path == str(gz) and r.run_ids == ["aiperf:run1"]
    assert store.scalar("SELECT source_path FROM runs") == str(gz)
    assert "gzip" in r.columns["(archive)"]
    z = store.load_file(zst)
    assert z.error is None and z.format == "published"
    pub = store.query("runs_published", {"run_ids": z.run_ids})
    ttft99 = json.loads((aiperf / "profile_export_aiperf.json").read_text())["records"]["ttft"]["p99"]
    assert pub.set_index(["metric", "stat"]).loc[("ttft_ms", "p99"), "value"] == pytest.approx(ttft99)


def test_zip_of_an_artefact_folder_loads_its_members(aiperf, tmp_path):
    z = tmp_path / "aiperf_run.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for f in sorted(aiperf.iterdir()):
            zf.write(f, f"run1/{f.name}")
    store = Store()
    r = store.load_file(z)
    assert r.error is None and r.format == "aiperf" and r.rows_loaded == 100
    assert store.scalar("SELECT source_path FROM runs") == f"{z}/run1/profile_export.jsonl"
    n_pub = store.scalar("SELECT count(*) FROM run_metrics")
    assert n_pub > 100  # AIPerf's aggregates beside it, in the same run
    paths = [p for (p,) in store.con.execute("SELECT path FROM inputs").fetchall()]
    assert all(p.startswith(str(z)) for p in paths), paths


def test_a_broken_archive_fails_alone_with_its_name(tmp_path):
    bad = tmp_path / "trace.jsonl.gz"
    bad.write_bytes(b"not gzip at all")
    good = tmp_path / "t.jsonl.gz"
    good.write_bytes(gzip.compress(b'{"request_id": "a", "ttft_ms": 12.5, "e2e_ms": 90}\n'))
    store = Store()
    reps = store.load_paths([tmp_path])
    by = {r.path.rsplit("/", 1)[1]: r for r in reps}
    assert by["trace.jsonl.gz"].error.startswith(f"{bad}: cannot be decompressed")
    assert by["t.jsonl.gz"].error is None and by["t.jsonl.gz"].rows_loaded == 1
    zbomb = tmp_path / "evil.zip"
    with zipfile.ZipFile(zbomb, "w") as zf:
        zf.writestr("../outside.jsonl", "{}\n")
    assert "points outside the archive" in store.load_file(zbomb).error
    assert not (tmp_path.parent / "outside.jsonl").exists()


def test_an_unrecognised_file_says_what_was_looked_for_and_what_it_resembles(tmp_path):
    p = tmp_path / "mystery.json"
    p.write_text('{\n "bench": {"ttft": {"avg": 3}},\n "request_throughput": 2\n}\n')
    err = Store().load_file(p).error
    assert "looked for" in err and "metric vocabulary" in err
    assert "request_throughput, ttft_ms" in err and "[tool.*] entry" in err
    q = tmp_path / "notes.txt"
    q.write_text("hello\nworld\n")
    assert "none of them resembles it" in Store().load_file(q).error
