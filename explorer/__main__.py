"""Command line (../shared/DESIGN.md "Command line"):

    trace-explorer [FILE ...] [--demo] [--session DB] [--screenshot PNG] [--size WxH]
                   [--lang zh_CN|en]   (every command takes --lang; default: the system locale)
    trace-explorer inspect FILE ... [--json]
    trace-explorer report (FILE ... | --demo) [...]
    trace-explorer replay FILE --blocks N [...]
    trace-explorer compare FILE ... [--baseline RUN] [--runs RUN,RUN] [--out DIR] [--format ...]

Each subcommand lives in explorer/cli/<name>.py with `add_arguments(parser)` and `run(args)
-> int`; the GUI is imported only when the window is asked for.
"""
from __future__ import annotations

import signal
import sys


def _early_stop(signum, _frame):  # noqa: ANN001 - before main(): nothing to clean up yet
    import os
    sys.stderr.write("trace-explorer: interrupted\n")
    sys.stderr.flush()
    os._exit(143 if signum == signal.SIGTERM else 130)


if __name__ == "__main__" or sys.argv[0].endswith("trace-explorer"):  # python -m explorer, or
    # the console script: a signal while the modules import is
    signal.signal(signal.SIGINT, _early_stop)  # "interrupted" too, not a traceback
    signal.signal(signal.SIGTERM, _early_stop)

import argparse  # noqa: E402
import importlib  # noqa: E402

SUBCOMMANDS = ("inspect", "report", "replay", "compare")


def _descriptions() -> dict[str, str]:
    """The first line of each subcommand's docstring, marked for the catalogue."""
    from explorer.core.i18n import N_
    return {"inspect": N_("Describe trace and eval files: detected format, runs, rows loaded / "
                          "skipped, column mapping, metric summary."),
            "report": N_("Write the analysis report (report.json, report.md, ...) of eval and "
                         "trace files, no display."),
            "replay": N_("Replay an arrival trace through the engine model under other KV-cache "
                         "and scheduler settings."),
            "compare": N_("Compare runs A/B, like with like, item by item, against run-to-run "
                          "noise; writes compare.json.")}


def _language(argv: list[str], prog: str) -> str | None:
    """Set the language of --lang (or, without it, of the system locale) before any parser or
    message is built; exits 2 with a usage error for a language not offered."""
    from explorer.cli import language_from_argv
    from explorer.core import i18n
    lang = language_from_argv(argv)
    try:
        i18n.set_language(lang)
    except ValueError as e:
        i18n.set_language(None)
        print(f"{prog}: error: --lang: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    return lang


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C: the work stops where it is, what it
    was writing is dropped (explorer.core.atomic.Bundle) and the previous outputs stay."""


_SIGNALLED: list[int] = []  # explorer.core.interrupt.SIGNALLED once main() has run


def _signalled_list() -> list[int]:
    from explorer.core.interrupt import SIGNALLED
    return SIGNALLED


def _on_sigterm(signum, _frame):
    _SIGNALLED.append(signum)
    raise Terminated()


def _on_sigint(signum, _frame):
    _SIGNALLED.append(signum)
    raise KeyboardInterrupt()


def _interrupted(terminated: bool) -> int:
    """The one line of an interrupted command; its exit status (130 Ctrl-C, 143 SIGTERM)."""
    from explorer.core.i18n import _
    what = _COMMAND[0] if _COMMAND else ""
    print(_("trace-explorer{cmd}: interrupted; nothing was half-written, the previous "
            "outputs are as they were").format(cmd=f" {what}" if what else ""), file=sys.stderr)
    return 143 if terminated else 130


_COMMAND: list[str] = []


def main(argv: list[str] | None = None) -> int:
    """The command line; Ctrl-C or SIGTERM at any point ends with one "interrupted" line and
    exit 130 / 143, never a traceback, the previous outputs intact."""
    argv = list(sys.argv[1:] if argv is None else argv)
    old, streams = None, (sys.stdout, sys.stderr)
    global _SIGNALLED
    _COMMAND[:] = [argv[0]] if argv and argv[0] in SUBCOMMANDS else []
    try:  # from the first line on: a Ctrl-C while the modules import is "interrupted" too
        _SIGNALLED = _signalled_list()
        _SIGNALLED.clear()
        try:
            old = (signal.signal(signal.SIGTERM, _on_sigterm),
                   signal.signal(signal.SIGINT, _on_sigint))
        except ValueError:  # not the main thread (a test calling main from a worker)
            old = None
        from explorer.core.escape import TerminalStream
        sys.stdout, sys.stderr = TerminalStream(sys.stdout), TerminalStream(sys.stderr)
        rc = _main(argv)
        if _SIGNALLED:  # the command swallowed the interrupt somewhere: it did not finish
            raise KeyboardInterrupt()
        return rc
    except KeyboardInterrupt as e:
        return _interrupted(isinstance(e, Terminated) or signal.SIGTERM in _SIGNALLED)
    except MemoryError:
        from explorer.core.i18n import _
        print(_("trace-explorer: out of memory: the inputs need more memory than this machine "
                "has free (load fewer files, or use --no-replay); nothing was half-written"),
              file=sys.stderr)
        return 3
    finally:
        sys.stdout, sys.stderr = streams
        _SIGNALLED.clear()  # handled: a later call in this process starts afresh
        if old is not None:
            signal.signal(signal.SIGTERM, old[0])
            signal.signal(signal.SIGINT, old[1])


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from explorer.cli import add_language_argument, translate_argparse
    from explorer.core.i18n import _
    translate_argparse()
    if argv and argv[0] in SUBCOMMANDS:
        _language(argv[1:], f"trace-explorer {argv[0]}")
        mod = importlib.import_module(f"explorer.cli.{argv[0]}")
        parser = argparse.ArgumentParser(prog=f"trace-explorer {argv[0]}",
                                         description=_(_descriptions().get(argv[0]) or
                                                       mod.__doc__.strip().splitlines()[0]))
        mod.add_arguments(parser)
        add_language_argument(parser)
        args = parser.parse_args(argv[1:])
        from explorer.core import errlog
        errlog.configure_logging()  # a logged failure's traceback goes to the log, not the terminal
        try:
            return mod.run(args)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as e:  # noqa: BLE001 - never a traceback for the user: one line + log
            if _SIGNALLED:  # a library failing on the interrupt (DuckDB: "transaction aborted")
                raise KeyboardInterrupt() from e
            from explorer.core import errlog
            where = errlog.record(e, f"trace-explorer {' '.join(argv)}")
            print(_("trace-explorer {cmd}: internal error: {error} ({where})").format(
                cmd=argv[0], error=errlog.describe(e), where=where), file=sys.stderr)
            return 2
    _language(argv, "trace-explorer")
    parser = argparse.ArgumentParser(
        prog="trace-explorer",
        description=_("Open eval results and inference traces in the Trace Explorer window. "
                      "Subcommands: {subcommands} (see trace-explorer SUBCOMMAND -h).").format(
                          subcommands=", ".join(SUBCOMMANDS)))
    from explorer.cli.types import path
    parser.add_argument("files", nargs="*", type=path,
                        help=_("trace and eval files or folders to load"))
    parser.add_argument("--demo", action="store_true", help=_("load the bundled simulated demo workload"))
    parser.add_argument("--session", metavar="DB", type=path, help=_("open a saved session (.duckdb)"))
    parser.add_argument("--screenshot", metavar="PNG",
                        help=_("load, render every panel, save the window to PNG and exit"))
    parser.add_argument("--size", metavar="WxH",
                        help=_("window size, e.g. 1366x768 (default: 1600x1000 shrunk to the "
                               "screen; --screenshot renders at exactly this size, default "
                               "1600x1000)"))
    from explorer.cli import add_engine_version_argument, engine_version_overrides
    add_engine_version_argument(parser)
    add_language_argument(parser)
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
