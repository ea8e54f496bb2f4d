"""Subcommands of the trace-explorer command line."""
from __future__ import annotations

import argparse
from explorer.core.i18n import N_, _

# argparse's own words (Python 3.11's argparse.py), marked so that the catalogue carries them
ARGPARSE_MESSAGES = (
    N_("usage: "), N_("positional arguments"), N_("options"),
    N_("show this help message and exit"), N_("%(prog)s: error: %(message)s\n"),
    N_("unrecognized arguments: %s"), N_("the following arguments are required: %s"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"), N_("expected one argument"),
    N_("expected at most one argument"), N_("expected at least one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("not allowed with argument %s"), N_("one of the arguments %s is required"),
    N_("ignored explicit argument %r"),
)


def translate_argparse() -> None:
    """Help and usage errors in the chosen language: argparse looks its module-level `_` /
    `ngettext` up at each call, so pointing them at the catalogue translates "usage:",
    "options", "-h" and its error lines (its other messages pass through unchanged)."""
    from explorer.core import i18n
    argparse._ = i18n._
    argparse.ngettext = i18n.ngettext


def add_engine_version_argument(parser: argparse.ArgumentParser) -> None:
    """--engine-version PATH=VERSION (repeatable), for every command that loads files."""
    parser.add_argument("--engine-version", metavar="PATH=VERSION", action="append", default=[],
                        dest="engine_versions",
                        help=_("engine version of the runs loaded from PATH (a file or a folder); "
                             "repeatable; wins over the version read from the file or its path"))


def engine_version_overrides(args) -> list[tuple[str, str]]:
    """The (PATH, VERSION) pairs of --engine-version. Raises ValueError for a malformed one."""
    from explorer.core.runs import parse_version_override
    return [parse_version_override(t) for t in getattr(args, "engine_versions", None) or []]


def language_from_argv(argv: list[str]) -> str | None:
    """The value of --lang in argv (``--lang zh_CN`` or ``--lang=zh_CN``), None without one:
    read before the parsers are built, so that their help is in that language too."""
    for i, a in enumerate(argv):
        if a == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--lang="):
            return a.split("=", 1)[1]
    return None


def add_language_argument(parser: argparse.ArgumentParser) -> None:
    """--lang LANG, for every command: the language of its messages and reports."""
    from explorer.core.i18n import LANGUAGES, _
    parser.add_argument("--lang", metavar="LANG", default=None,
                        help=_("language of messages and reports: {langs} (default: the system "
                               "locale)").format(langs=", ".join(LANGUAGES)))
