"""Subcommands of the trace-explorer command line."""
from __future__ import annotations

import argparse


def add_engine_version_argument(parser: argparse.ArgumentParser) -> None:
    """--engine-version PATH=VERSION (repeatable), for every command that loads files."""
    parser.add_argument("--engine-version", metavar="PATH=VERSION", action="append", default=[],
                        dest="engine_versions",
                        help="engine version of the runs loaded from PATH (a file or a folder); "
                             "repeatable; wins over the version read from the file or its path")


def engine_version_overrides(args) -> list[tuple[str, str]]:
    """The (PATH, VERSION) pairs of --engine-version. Raises ValueError for a malformed one."""
    from explorer.core.runs import parse_version_override
    return [parse_version_override(t) for t in getattr(args, "engine_versions", None) or []]
