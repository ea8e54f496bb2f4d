"""The what-if's own exceptions (both TraceExplorerError, so callers can catch them with the
core's other errors; NoData and InputError come from explorer.core.errors)."""
from __future__ import annotations

from ...errors import TraceExplorerError


class WhatIfError(TraceExplorerError):
    """The what-if cannot be answered as asked (unknown metric, unidentifiable effect...).

    The message says why in words fit for the user.
    """


class Cancelled(TraceExplorerError):
    """The caller's cancelled() returned True."""
