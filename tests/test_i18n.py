"""Languages (DESIGN "Languages"): the catalogues are complete, every marked string in the code
has its Chinese, placeholders survive the translation, the language follows --lang / the
locale, and the knowledge base carries its Chinese beside its English."""
from __future__ import annotations

import ast
import string
import tomllib
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from explorer.core import i18n

ROOT = Path(__file__).resolve().parents[1]
PO = ROOT / "resources/i18n/zh_CN/LC_MESSAGES/explorer.po"
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


def _forms(m) -> tuple[tuple, tuple]:
    """A catalogue message's English forms and their translations (one each, or the plurals)."""
    ids = (m.id,) if isinstance(m.id, str) else m.id
    return ids, ((m.string,) if isinstance(m.string, str) else m.string)


def test_catalogue_has_no_unfinished_entry_and_keeps_the_placeholders():
    bad = []
    for m in _catalogue():
        if not m.id:
            continue
        ids, strs = _forms(m)
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


def test_catalogue_keeps_qt_style_placeholders():
    """The widgets' messages moved from Qt Linguist with their %1 / %2 (filled by .replace):
    each translation has the placeholders of its English, no more, no fewer."""
    import re
    bad = []
    for m in _catalogue():
        if not m.id:
            continue
        ids, strs = _forms(m)
        want = set(re.findall(r"%\d", ids[0]))
        bad += [(ids[0], t) for t in strs if set(re.findall(r"%\d", t)) != want]
    assert not bad, bad


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


WINDOW_SOURCES = ("widgets", "explorer/app.py", "explorer/session.py", "explorer/translators.py")


def _window_files() -> list[Path]:
    out = []
    for src in WINDOW_SOURCES:
        p = ROOT / src
        out += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return out


def test_one_translation_entry_point_in_the_window():
    """Issue 32 item 5: the widgets, the app and the session translate only through
    explorer.core.i18n (_ / ngettext / pgettext / N_ / NP_): no Qt tr(), translate() or
    QT_TRANSLATE_NOOP / QT_TR_NOOP, whose strings no catalogue of ours holds any more."""
    qt = []
    for path in _window_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name in ("tr", "translate", "QT_TRANSLATE_NOOP", "QT_TR_NOOP", "QT_TRANSLATE_N_NOOP") \
                        and not (name == "translate" and isinstance(f, ast.Attribute)
                                 and not (isinstance(f.value, ast.Name) and f.value.id == "QCoreApplication")):
                    qt.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}()")
    assert not qt, "\n".join(qt)


def _extract(tmp_path, sources) -> list:
    """The messages Babel extracts from `sources` with `make catalogues`' keywords."""
    import re
    import subprocess
    import sys
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    keys = re.search(r"pybabel extract -F babel.cfg (.*?) --no-location", make, re.S).group(1)
    pot = tmp_path / "t.pot"
    pybabel = Path(sys.executable).with_name("pybabel")
    subprocess.run([str(pybabel), "-q", "extract", "-F", "babel.cfg",
                    *keys.replace("\\\n", " ").split(), "-o", str(pot), *sources],
                   cwd=ROOT, check=True, timeout=300, capture_output=True)
    with pot.open("rb") as fh:
        return [m for m in read_po(fh) if m.id]


def test_every_message_extracted_from_the_window_has_its_chinese(tmp_path):
    """Every msgid `make catalogues` extracts from widgets/, the app and the session (their
    strings moved from the Qt Linguist .ts) has a finished Chinese entry in explorer.po."""
    cat = _catalogue()
    got = _extract(tmp_path, WINDOW_SOURCES)
    assert len(got) > 500   # the widgets' own (427 from the .ts) beside the painters'
    missing = []
    for m in got:
        e = cat.get(m.id, context=m.context)
        strs = () if e is None else (e.string,) if isinstance(e.string, str) else e.string
        if e is None or e.fuzzy or not strs or not all(strs):
            missing.append((m.context, m.id))
    assert not missing, missing


def test_meanings_kept_apart_by_context(zh):
    """One English text, one Chinese, except where the meaning differs (the widgets' .ts kept
    them apart by class): the verb on the Replay / What-if buttons against a run, the Cases
    panel's name against a count."""
    assert (i18n.pgettext("button", "Run"), i18n._("Run")) == ("运行", "Run")
    assert (i18n.pgettext("panel", "Cases"), i18n._("Cases")) == ("Case", "Case 数")
    assert i18n._("&File") == "文件(&F)" and i18n._("preempted") == "被抢占"
    assert i18n.ngettext("Replaying {n} request…", "Replaying {n} requests…", 3).format(n=3) \
        == "正在回放 3 个请求…"
    i18n.set_language("en")
    assert i18n.ngettext("Replaying {n} request…", "Replaying {n} requests…", 1).format(n=1) \
        == "Replaying 1 request…"


def test_make_catalogues_leaves_the_catalogue_as_committed(tmp_path):
    """`make catalogues` (Babel extract over explorer/ and widgets/, then update) on the
    committed sources changes nothing but the extraction date: no string's Chinese is dropped
    (a call Babel cannot read, an entry only the code's ast sees) and nothing comes in new."""
    import re
    import shutil
    import subprocess
    import sys
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    ext = re.search(r"pybabel extract (.*?) -o ", make, re.S).group(1).replace("\\\n", " ").split()
    upd = re.search(r"pybabel update -D explorer (.*?)\n\n", make, re.S).group(1)
    upd = upd.replace("\\\n", " ").split("zh_CN", 1)[1].split()   # the options after -l zh_CN
    pybabel = str(Path(sys.executable).with_name("pybabel"))
    pot, out = tmp_path / "explorer.pot", tmp_path / "explorer.po"
    shutil.copy(PO, out)
    subprocess.run([pybabel, "-q", "extract", *ext, "-o", str(pot), "explorer", "widgets"],
                   cwd=ROOT, check=True, timeout=300, capture_output=True)
    subprocess.run([pybabel, "-q", "update", "-D", "explorer", "-i", str(pot), "-o", str(out),
                    "-l", "zh_CN", *upd], cwd=ROOT, check=True, timeout=300, capture_output=True)
    undated = lambda p: re.sub(r'"POT-Creation-Date: [^"]*"', "", p.read_text(encoding="utf-8"))  # noqa: E731
    assert undated(out) == undated(PO)
