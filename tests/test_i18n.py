"""Languages (DESIGN "Languages"): the catalogues are complete, every marked string in the code
has its Chinese, placeholders survive the translation, the language follows --lang / the
locale, and the knowledge base carries its Chinese beside its English."""
from __future__ import annotations

import ast
import string
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from explorer.core import i18n

ROOT = Path(__file__).resolve().parents[1]
PO = ROOT / "resources/i18n/zh_CN/LC_MESSAGES/explorer.po"
TS = ROOT / "resources/i18n/trace_explorer_zh_CN.ts"
KB = ROOT / "resources/knowledge_base.toml"


@pytest.fixture
def zh():
    i18n.set_language("zh_CN")
    yield
    i18n.set_language("en")


def _catalogue():
    with PO.open("rb") as fh:
        return read_po(fh, locale="zh_CN")


def _marked_in_code() -> dict:
    """Every literal passed to _(), N_() or ngettext() in explorer/ and widgets/ (read with ast,
    so a call inside an f-string, which pybabel misses on Python 3.11, is seen too) -> where;
    those passed to NP_() or pgettext() with their context as (context, literal)."""
    out = {}
    for folder in ("explorer", "widgets"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                    continue
                lits = [a.value for a in node.args
                        if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                if node.func.id in ("_", "N_", "ngettext") and node.args \
                        and isinstance(node.args[0], ast.Constant) and lits and lits[0]:
                    out[lits[0]] = where
                elif node.func.id in ("NP_", "pgettext") and len(lits) == 2 == len(node.args):
                    out[tuple(lits)] = where
    return out


def _fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def test_every_marked_string_has_its_chinese():
    cat = _catalogue()
    done = {m.id if isinstance(m.id, str) else m.id[0]: m for m in cat if m.id and not m.context}
    done |= {(m.context, m.id): m for m in cat if m.id and m.context}
    missing = [f"{where}: {msg!r}" for msg, where in _marked_in_code().items()
               if msg not in done or not done[msg].string or done[msg].fuzzy
               or (isinstance(done[msg].string, tuple) and not all(done[msg].string))]
    assert not missing, "untranslated (run `make catalogues`, then translate):\n" + "\n".join(missing)


def test_catalogue_has_no_unfinished_entry_and_keeps_the_placeholders():
    bad = []
    for m in _catalogue():
        if not m.id:
            continue
        ids = (m.id,) if isinstance(m.id, str) else m.id
        strs = (m.string,) if isinstance(m.string, str) else m.string
        if m.fuzzy or not all(strs):
            bad.append(f"unfinished: {ids[0]!r}")
            continue
        try:  # a message that is not a format string (literal braces) is not formatted
            allowed = set().union(*(_fields(i) for i in ids))
            ids[0].format(**{k: 1 for k in allowed})
        except (ValueError, IndexError, KeyError):
            continue
        for s in strs:
            extra = _fields(s) - allowed
            if extra:  # a placeholder the code does not fill: KeyError at run time
                bad.append(f"{ids[0]!r}: unknown placeholder(s) {sorted(extra)} in {s!r}")
            try:
                s.format(**{k: 1 for k in _fields(s)})
            except (ValueError, IndexError) as e:
                bad.append(f"{ids[0]!r}: {s!r} does not format ({e})")
    assert not bad, "\n".join(bad)


def test_widget_catalogue_has_no_unfinished_entry():
    root = ET.parse(TS).getroot()
    msgs = root.findall(".//message")
    assert len(msgs) > 200  # the widgets' strings were extracted (pyside6-lupdate)
    bad = [m.findtext("source") for m in msgs
           if (m.find("translation").get("type") in ("unfinished", "vanished", "obsolete"))
           or not (m.findtext("translation") or m.findall("translation/numerusform"))]
    assert not bad, f"{len(bad)} unfinished widget strings, e.g. {bad[:10]}"


def test_widget_catalogue_keeps_placeholders():
    import re
    for m in ET.parse(TS).getroot().findall(".//message"):
        src, tr = m.findtext("source") or "", m.findtext("translation") or ""
        assert set(re.findall(r"%\d", src)) == set(re.findall(r"%\d", tr)), (src, tr)


def test_language_names_and_locale():
    assert i18n.normalize("zh-CN") == i18n.normalize("zh_CN.UTF-8") == "zh_CN"
    assert i18n.normalize("en_US") == i18n.normalize("C") == "en"
    with pytest.raises(ValueError, match="zh_CN"):
        i18n.normalize("fr")
    assert i18n.system_language({"LANG": "zh_CN.UTF-8"}) == "zh_CN"
    assert i18n.system_language({"LANGUAGE": "en_GB:zh_CN", "LANG": "zh_CN.UTF-8"}) == "en"
    assert i18n.system_language({"LANG": "zh_TW.UTF-8"}) == "en"  # not offered
    assert i18n.system_language({}) == "en"


def test_translation_switches_and_terms(zh):
    from explorer.core.names import label, plural
    assert i18n._("Conclusion") == "定界结论"
    assert i18n._("Control group") == "对照组"
    assert label("queue_ms") == "调度延迟 (ms)"
    assert label("tpot_ms") == "TPOT (ms/token)"  # metric names stay in Latin letters
    assert plural(3, "case") == "3 个 case"
    i18n.set_language("en")
    assert i18n._("Conclusion") == "Conclusion" and plural(3, "case") == "3 cases"


def test_knowledge_base_carries_chinese_beside_english():
    kb = tomllib.loads(KB.read_text(encoding="utf-8"))
    lacking = []
    for m, meta in kb["metrics"].items():
        if "label_zh" not in meta:
            lacking.append(f"metrics.{m}")
    for m, meta in kb["modules"].items():
        if not {"name_zh", "description_zh"} <= set(meta):
            lacking.append(f"modules.{m}")
    for r in kb["rules"]:
        if _fields(r.get("explain_zh", "")) != _fields(r["explain"]) or "explain_zh" not in r:
            lacking.append(f"rule {r['id']}")
        for s in r.get("suggestions", []):
            if "text_zh" not in s:
                lacking.append(f"rule {r['id']} suggestion")
    for m, meta in kb.get("case_level", {}).items():
        if not {"aspect_zh", "higher_zh", "lower_zh"} <= set(meta):
            lacking.append(f"case_level.{m}")
    assert not lacking, lacking


def test_every_command_takes_lang(capsys, zh):
    from explorer.__main__ import SUBCOMMANDS, main
    for cmd in SUBCOMMANDS + ("",):
        argv = ([cmd] if cmd else []) + ["--lang", "zh_CN", "-h"]
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 0
        out = capsys.readouterr().out
        assert "--lang" in out and any("\u4e00" <= ch <= "\u9fff" for ch in out), cmd
    with pytest.raises(SystemExit) as e:
        main(["report", "--lang", "fr", "--demo"])
    assert e.value.code == 2
    assert "zh_CN" in capsys.readouterr().err


def test_every_widget_string_is_in_the_widget_catalogue():
    """self.tr("...") / tr("...") / QT_TRANSLATE_NOOP(ctx, "...") literals in widgets/, the
    app and the session (its progress labels and selection names; read with ast: a call inside an f-string is seen too) all have a finished entry."""
    done = {m.findtext("source") for m in ET.parse(TS).getroot().findall(".//message")
            if m.find("translation").get("type") is None}
    missing = []
    for path in list((ROOT / "widgets").rglob("*.py")) + [ROOT / "explorer/app.py",
                                                            ROOT / "explorer/session.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            args = node.args[1:] if name in ("translate", "QT_TRANSLATE_NOOP", "_T") else node.args
            if name in ("tr", "translate", "QT_TRANSLATE_NOOP", "_T") and args \
                    and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
                if args[0].value not in done:
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno}: {args[0].value!r}")
    assert not missing, "\n".join(missing)


def test_make_catalogues_leaves_the_widget_catalogue_as_committed(tmp_path):
    """`make catalogues` re-extracts the widgets' strings with pyside6-lupdate: on the committed
    sources it must change nothing (no entry lost to a context lupdate cannot read, no
    reformatting), so running it never drops the Chinese of a string."""
    import shutil
    import subprocess
    import sys

    lupdate = Path(sys.executable).parent / "pyside6-lupdate"
    if not lupdate.exists():
        pytest.skip(f"{lupdate} not installed")
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "WIDGET_SOURCES = $(sort $(shell find widgets -name '*.py')) explorer/app.py " \
           "explorer/session.py" in make and "-no-obsolete -locations none" in make
    sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "widgets").rglob("*.py"))
    out = tmp_path / TS.name
    shutil.copy(TS, out)
    subprocess.run([str(lupdate), "-silent", "-no-obsolete", "-locations", "none", *sources,
                    "explorer/app.py", "explorer/session.py", "-ts", str(out)],
                   cwd=ROOT, check=True, timeout=120)
    assert out.read_text(encoding="utf-8") == TS.read_text(encoding="utf-8")
