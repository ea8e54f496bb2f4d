"""Command line (../shared/DESIGN.md "Command line"):

    trace-explorer [FILE ...] [--demo] [--session DB] [--screenshot PNG] [--size WxH]
    trace-explorer inspect FILE ... [--json]
    trace-explorer report (FILE ... | --demo) [...]
    trace-explorer replay FILE --blocks N [...]

Each subcommand lives in explorer/cli/<name>.py with `add_arguments(parser)` and `run(args)
-> int`; the GUI is imported only when the window is asked for.
"""
from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS = ("inspect", "report", "replay")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        mod = importlib.import_module(f"explorer.cli.{argv[0]}")
        parser = argparse.ArgumentParser(prog=f"trace-explorer {argv[0]}",
                                         description=mod.__doc__.strip().splitlines()[0])
        mod.add_arguments(parser)
        args = parser.parse_args(argv[1:])
        try:
            return mod.run(args)
        except KeyboardInterrupt:
            return 130
        except Exception as e:  # noqa: BLE001 - never a traceback for the user: one line + log
            from explorer.core import errlog
            where = errlog.record(e, f"trace-explorer {' '.join(argv)}")
            print(f"trace-explorer {argv[0]}: internal error: {errlog.describe(e)} ({where})",
                  file=sys.stderr)
            return 2
    parser = argparse.ArgumentParser(
        prog="trace-explorer",
        description="Open eval results and inference traces in the Trace Explorer window. "
                    f"Subcommands: {', '.join(SUBCOMMANDS)} (see trace-explorer SUBCOMMAND -h).")
    parser.add_argument("files", nargs="*", help="trace and eval files or folders to load")
    parser.add_argument("--demo", action="store_true", help="load the bundled simulated demo workload")
    parser.add_argument("--session", metavar="DB", help="open a saved session (.duckdb)")
    parser.add_argument("--screenshot", metavar="PNG",
                        help="load, render every panel, save the window to PNG and exit")
    parser.add_argument("--size", metavar="WxH",
                        help="window size, e.g. 1366x768 (default: 1600x1000 shrunk to the screen; "
                             "--screenshot renders at exactly this size, default 1600x1000)")
    from explorer.cli import add_engine_version_argument, engine_version_overrides
    add_engine_version_argument(parser)
    args = parser.parse_args(argv)
    from explorer.app import parse_size
    try:
        parse_size(args.size)
        args.version_overrides = engine_version_overrides(args)
    except ValueError as e:
        parser.error(str(e))
    from explorer.app import run_app  # Qt only from here on
    return run_app(args)


if __name__ == "__main__":
    sys.exit(main())
