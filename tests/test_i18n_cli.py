"""The data path in Chinese: `inspect` and `report` with --lang zh_CN print the loaders' skip
reasons, ignored files, failures and the summary lines in Chinese; no English sentence is left
outside data (paths, column names, run ids), metric names and units. English stays as it was."""
from __future__ import annotations

import re

import pytest

from explorer.__main__ import main
from explorer.core import i18n
from tests.i18n_check import english_phrases

ZH = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def inputs(tmp_path):
    """A folder with a CSV with a negative and a non-numeric TTFT, a JSONL with a negative TTFT
    and a line that is not JSON, and a text file that is neither trace nor eval."""
    d = tmp_path / "in"
    d.mkdir()
    (d / "bad.csv").write_text("request_id,ttft_ms,tpot_ms,prompt_tokens,output_tokens\n"
                               "r1,120,15,100,50\nr2,-5,15,100,50\nr3,abc,14,90,40\n"
                               "r4,130,16,2,3\n", encoding="utf-8")
    (d / "t.jsonl").write_text('{"request_id":"a","ttft_s":0.1,"tpot_s":0.01,"input_tokens":3,'
                               '"output_tokens":4}\n{"request_id":"b","ttft_s":-1,'
                               '"input_tokens":3,"output_tokens":4}\nnot json\n', encoding="utf-8")
    (d / "notes.txt").write_text("meeting notes, nothing to load\n", encoding="utf-8")
    return d


def _run(capsys, argv):
    try:
        code = main(argv)
    finally:
        i18n.set_language("en")
    out, err = capsys.readouterr()
    return code, out + err


DATA_COLUMNS = {"request_id", "ttft_ms", "tpot_ms", "prompt_tokens", "output_tokens", "ttft_s",
                "tpot_s", "input_tokens", "completion_tokens", "generic_table"}


def test_inspect_in_chinese(capsys, inputs, tmp_path):
    missing = tmp_path / "missing.csv"
    code, text = _run(capsys, ["inspect", "--lang", "zh_CN", str(inputs), str(missing)])
    assert code == 1  # the missing file fails, the others still report
    data = {str(inputs / n) for n in ("bad.csv", "t.jsonl", "notes.txt")} | {str(missing)}
    data |= DATA_COLUMNS | {"table:bad", "table:t"}
    assert not english_phrases(text, data), english_phrases(text, data)
    for zh in ("第 3 行：字段 'ttft_ms'：负值", "字段 'ttft_ms'：不是数字：'abc'",  # skipped rows
               "第 3 行：不是 JSON 对象",                                        # a loader warning
               "不是 trace 或 eval 文件",                                        # an ignored file
               "文件或文件夹不存在",                                              # a failure
               "3 个输入：已加载 2 个，失败 1 个，忽略 1 个"):                    # the summary
        assert zh in text, (zh, text)
    code, en = _run(capsys, ["inspect", "--lang", "en", str(inputs)])
    assert "line 3: field 'ttft_ms': negative value" in en and "2 inputs: 2 loaded" in en
    assert not ZH.search(en)


def test_report_messages_in_chinese(capsys, inputs, tmp_path):
    code, text = _run(capsys, ["report", "--lang", "zh_CN", str(inputs), "--out",
                               str(tmp_path / "out"), "--format", "json"])
    data = {str(inputs / n) for n in ("bad.csv", "t.jsonl", "notes.txt")} | DATA_COLUMNS
    data.add(str(tmp_path / "out" / "report.json"))
    assert not english_phrases(text, data), english_phrases(text, data)
    assert "已加载 " + str(inputs / "bad.csv") + "：generic_table，2 行，跳过 2 行" in text, text
    assert "已忽略 " + str(inputs / "notes.txt") in text


@pytest.mark.parametrize("cmd", ["inspect", "report", "replay"])
def test_help_and_usage_errors_in_chinese(capsys, cmd):
    """argparse's own words (usage, option headings, -h, error lines) follow --lang too."""
    with pytest.raises(SystemExit) as ex:
        _run(capsys, [cmd, "--lang", "zh_CN", "--help"])
    assert ex.value.code == 0
    out, _err = capsys.readouterr()
    assert out.startswith("用法：") and "显示此帮助信息并退出" in out and "选项" in out, out
    assert not english_phrases(out), english_phrases(out)
    with pytest.raises(SystemExit):
        _run(capsys, [cmd, "--lang", "zh_CN", "--no-such-option"])
    err = capsys.readouterr().err
    assert f"trace-explorer {cmd}：错误：" in err, err
    with pytest.raises(SystemExit):
        _run(capsys, [cmd, "--lang", "en", "--help"])
    assert capsys.readouterr().out.startswith("usage: ")
