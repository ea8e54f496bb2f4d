"""A bad row never costs the file (a missing / null request_id is a skipped row with its line),
legacy encodings are detected and named (GBK / GB18030 / Shift-JIS / Windows-1252 / UTF-16), a
file mixing UTF-8 with another encoding is refused naming the line, and a JSONL whose first
record holds U+2028 / U+2029 is read."""
from __future__ import annotations

import codecs
import json

import pytest

from explorer.core.formats._encoding import encoding_of

pytestmark = pytest.mark.timeout(120)


def _rec(i: int, **kw) -> dict:
    return {"request_id": f"r{i}", "ttft_ms": 10.0 + i % 7, "e2e_ms": 100.0 + i, **kw}


@pytest.mark.parametrize("bad", ["absent", "null"])
def test_a_jsonl_row_without_request_id_is_skipped_with_its_line(tmp_path, store, bad):
    n, at = 50_000, 40_000
    f = tmp_path / "big.jsonl"
    with open(f, "w") as fh:
        for i in range(n):
            r = _rec(i)
            if i == at:
                if bad == "absent":
                    del r["request_id"]
                else:
                    r["request_id"] = None
            fh.write(json.dumps(r) + "\n")
    r = store.load_file(f)
    assert r.error is None, r.error
    assert r.rows_loaded == n - 1 and r.rows_skipped == 1
    assert r.skipped_reasons == [f"line {at + 1}: field 'request_id': missing (null or absent): "
                                 "a request needs its id"]
    assert store.count("requests") == n - 1
    store.con.execute("SELECT 1")  # no aborted transaction left behind


def test_a_csv_row_with_an_empty_request_id_is_skipped(tmp_path, store):
    f = tmp_path / "t.csv"
    f.write_text("request_id,ttft_ms,e2e_ms\nr1,1,2\n,3,4\nr3,5,6\n")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2 and r.rows_skipped == 1, r
    assert r.skipped_reasons[0].startswith("line 3: field 'request_id'")


EVAL = "case_id,correct,category,cluster\n" + "".join(
    f"c{i},{i % 2},{{cat}},{{clu}}\n" for i in range(30))


@pytest.mark.parametrize("codec,cat,clu,name", [
    ("gbk", "单位换算", "计算题中间步骤出错", "GB18030 / GBK"),
    ("gb18030", "单位换算", "计算题中间步骤出错", "GB18030 / GBK"),
    ("shift_jis", "単位換算", "計算問題の途中で誤り", "Shift-JIS"),
    ("cp1252", "café", "naïve façade", "Windows-1252"),
    ("utf-16", "单位换算", "计算题中间步骤出错", "UTF-16"),
])
def test_legacy_encodings_are_detected_and_named(tmp_path, store, codec, cat, clu, name):
    f = tmp_path / f"eval_{codec}.csv"
    f.write_bytes(EVAL.replace("{cat}", cat).replace("{clu}", clu).encode(codec))
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 30, r
    assert store.con.execute("SELECT DISTINCT category, cluster FROM cases").fetchall() == [(cat, clu)]
    assert any(v.startswith(name) for v in r.columns.values()), r.columns


def test_inspect_names_the_guess(tmp_path, capsys):
    from explorer.__main__ import main
    f = tmp_path / "eval.csv"
    f.write_bytes(EVAL.replace("{cat}", "单位换算").replace("{clu}", "x").encode("gbk"))
    assert main(["inspect", str(f)]) == 0
    assert "GB18030 / GBK (Simplified Chinese), read as UTF-8" in capsys.readouterr().out


def test_a_utf8_file_with_gbk_lines_is_refused_naming_the_line(tmp_path, store):
    f = tmp_path / "mixed.csv"
    head = "case_id,correct,category\n" + "".join(f"c{i},1,单位换算\n" for i in range(10))
    f.write_bytes(head.encode("utf-8") + "c99,0,单位换算\n".encode("gbk"))
    r = store.load_file(f)
    assert r.error and r.error.startswith(f"{f}:12: ") and "mixes encodings" in r.error, r.error


def test_a_jsonl_line_in_another_encoding_past_the_head_is_skipped(tmp_path, store):
    f = tmp_path / "t.jsonl"
    good = "".join(json.dumps(_rec(i, note="单位"), ensure_ascii=False) + "\n" for i in range(3000))
    f.write_bytes(good.encode() + json.dumps(_rec(9999, note="单位"), ensure_ascii=False)
                  .encode("gbk") + b"\n")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 3000 and r.rows_skipped == 1, r
    assert r.skipped_reasons == ["line 3001: bytes that are not UTF-8 (the file mixes encodings)"]


def test_encoding_of_keeps_utf8_and_boms():
    assert encoding_of("单位换算".encode()) is None
    assert encoding_of(codecs.BOM_UTF8 + "单位".encode()) is None
    assert encoding_of(codecs.BOM_UTF16_LE + "a,b\n".encode("utf-16-le")) == "utf-16"


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x0c", "\x1c"])
def test_a_first_record_holding_a_unicode_line_separator_is_read(tmp_path, store, sep):
    f = tmp_path / "t.jsonl"
    f.write_text(json.dumps(_rec(0, prompt=f"x{sep}y"), ensure_ascii=False) + "\n"
                 + "".join(json.dumps(_rec(i)) + "\n" for i in range(1, 5)), encoding="utf-8")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 5, r


@pytest.mark.parametrize("kind,rec,fmt", [
    ("mooncake", {"timestamp": 0, "input_length": 5, "output_length": 3, "hash_ids": [1]},
     "mooncake"),
    ("eval", {"case_id": "c", "correct": True, "category": "a"}, "generic_eval"),
    ("lm_eval", {"doc_id": 0, "doc": {}, "target": "1", "resps": [["1"]],
                 "filtered_resps": ["1"], "acc": 1.0}, "lm_eval"),
])
@pytest.mark.parametrize("sep", ["\u2028", "\u2029"])
def test_formats_are_detected_when_records_hold_a_unicode_separator(tmp_path, store, kind, rec,
                                                                    fmt, sep):
    """Before: "unrecognised file" (the head was split at U+2028, no record parsed)."""
    f = tmp_path / f"{kind}.jsonl"
    ids = {"eval": "case_id", "lm_eval": "doc_id", "mooncake": "timestamp"}[kind]
    f.write_text("".join(json.dumps({**rec, ids: f"c{i}" if kind == "eval" else i,
                                     "note": f"x{sep}y"}, ensure_ascii=False)
                         + "\n" for i in range(5)), encoding="utf-8")
    r = store.load_file(f)
    assert r.error is None and r.format == fmt and r.rows_loaded == 5, r
