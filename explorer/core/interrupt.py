"""Whether the process was told to stop (Ctrl-C, SIGTERM): explorer.__main__'s handlers record
the signal here before raising, so that what fails after it (DuckDB's "transaction aborted",
a library wrapping the KeyboardInterrupt, a section caught as an error) is taken for the
interruption it is: a report bundle is then never committed (explorer.core.atomic.Bundle) and
the command ends with "interrupted", never with a half-true result."""
from __future__ import annotations

SIGNALLED: list[int] = []


def signalled() -> bool:
    return bool(SIGNALLED)


def check() -> None:
    """Raise KeyboardInterrupt when a signal was received (at a point of no return)."""
    if SIGNALLED:
        raise KeyboardInterrupt()
