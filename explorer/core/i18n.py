"""Languages (DESIGN "Languages"): the Qt-free catalogue of the core's text.

The core's sentences (conclusion, suggestions, section reasons, report headings, command-line
messages) go through `_()` / `ngettext()`, Python's gettext, with the catalogue
resources/i18n/<lang>/LC_MESSAGES/explorer.po (extracted and compiled with Babel: `make
catalogues`, `make translations`). The knowledge base carries its Chinese beside its English as
data (`explain_zh`, `text_zh`, ...): `pick()` reads the field of the current language.
Metric names engineers write in Latin letters (TTFT, TPOT, ITL, KV cache, P99) stay as they are.

One language per process, chosen once: `--lang` on the command line, else the app's saved
choice, else the system locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG). Strings kept in
module-level tables are marked with `N_()` and translated where they are shown.
"""
from __future__ import annotations

import gettext
import io
import os
from importlib import resources

LANGUAGES = ("en", "zh_CN")
NAMES = {"en": "English", "zh_CN": "简体中文"}
DOMAIN = "explorer"
_state: dict = {"lang": "en", "tr": gettext.NullTranslations()}


def normalize(lang: str | None) -> str:
    """'zh', 'zh_CN', 'zh-CN', 'zh_Hans', 'zh_CN.UTF-8' -> 'zh_CN'; 'en', 'en_US', 'C', 'POSIX'
    -> 'en'. Raises ValueError naming the languages offered for anything else."""
    t = (lang or "").strip().split(".")[0].split("@")[0].replace("-", "_")
    low = t.lower()
    if low in ("zh", "zh_cn", "zh_hans", "zh_hans_cn", "zh_sg"):
        return "zh_CN"
    if low in ("en", "c", "posix") or low.startswith("en_"):
        return "en"
    raise ValueError(f"unknown language {lang!r}: choose one of {', '.join(LANGUAGES)}")


def system_language(env=None) -> str:
    """The language of the system locale: zh_CN for any Simplified Chinese locale, else en."""
    env = os.environ if env is None else env
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        for part in (env.get(var) or "").split(":"):
            if not part:
                continue
            try:
                return normalize(part)
            except ValueError:  # zh_TW, fr_FR, ...: not offered, English
                return "en"
    return "en"


def catalogue_dir():
    return resources.files("explorer.resources").joinpath("i18n")


def _load(lang: str) -> gettext.NullTranslations:
    """The compiled catalogue (.mo, built by `make translations`); when it is missing or older
    than its .po (a fresh checkout), the .po compiled in memory with Babel."""
    if lang == "en":
        return gettext.NullTranslations()
    base = catalogue_dir().joinpath(lang, "LC_MESSAGES")
    po, mo = base.joinpath(f"{DOMAIN}.po"), base.joinpath(f"{DOMAIN}.mo")
    try:
        fresh = mo.is_file() and (not po.is_file() or
                                  os.path.getmtime(str(mo)) >= os.path.getmtime(str(po)))
    except OSError:
        fresh = mo.is_file()
    if fresh:
        return gettext.GNUTranslations(io.BytesIO(mo.read_bytes()))
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    buf = io.BytesIO()
    with po.open("rb") as fh:
        write_mo(buf, read_po(fh, locale=lang))
    buf.seek(0)
    return gettext.GNUTranslations(buf)


def compile_catalogue(lang: str) -> str:
    """Write the .mo of a language from its .po (`make translations`); returns its path. Babel's
    write_mo, without `pybabel compile`'s %-format check, which misreads "95% interval" as a
    %-placeholder (the messages are str.format templates; tests/test_i18n.py checks those)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    base = catalogue_dir().joinpath(lang, "LC_MESSAGES")
    with base.joinpath(f"{DOMAIN}.po").open("rb") as fh:
        cat = read_po(fh, locale=lang)
    out = str(base.joinpath(f"{DOMAIN}.mo"))
    with open(out, "wb") as fh:
        write_mo(fh, cat)
    return out


def set_language(lang: str | None = None) -> str:
    """Use `lang` (None: the system locale) for every later `_()`; returns the language set.
    Raises ValueError for a language not offered."""
    code = system_language() if lang is None else normalize(lang)
    _state["tr"] = _load(code)
    _state["lang"] = code
    return code


def language() -> str:
    return _state["lang"]


def _(message: str) -> str:
    """The message in the current language (itself when there is no translation)."""
    return _state["tr"].gettext(message) if message else message


def ngettext(singular: str, plural: str, n: int) -> str:
    return _state["tr"].ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Marks a string for extraction without translating it (module-level tables)."""
    return message


def pgettext(context: str, message: str) -> str:
    """The message in the current language as it reads in `context` (the same English word
    may read differently: "Cases" is a panel's name in "panel", a count elsewhere)."""
    return _state["tr"].pgettext(context, message) if message else message


def NP_(context: str, message: str) -> str:
    """N_ with a context: marks `message` for extraction in `context`; shown through
    pgettext(context, message)."""
    return message


def pick(data: dict, key: str, default=None):
    """A bilingual data field (knowledge base): data[key + '_zh'] in Chinese when present, else
    data[key]."""
    if _state["lang"] == "zh_CN":
        zh = data.get(f"{key}_zh")
        if zh:
            return zh
    return data.get(key, default)


def field_text(name: str) -> str:
    """The prefix naming a field in a message: "field 'ttft_s': " / "字段 'ttft_s'："."""
    return _("field '{field}': ").format(field=name)


def line_text(line: int) -> str:
    """The prefix naming a line in a message: "line 12: " / "第 12 行："."""
    return _("line {line}: ").format(line=line)


def join_list(items: list[str]) -> str:
    """'a, b and c' / 'a、b 和 c'."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return items[0] if items else ""
    sep, last = ("、", " 和 ") if _state["lang"] == "zh_CN" else (", ", " and ")
    return sep.join(items[:-1]) + last + items[-1]
