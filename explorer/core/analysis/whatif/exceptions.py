"""The what-if's own exception (a TraceExplorerError, so callers can catch it with the core's
other errors; NoData, InputError and Cancelled come from explorer.core.errors)."""
from __future__ import annotations

from ...errors import TraceExplorerError


class WhatIfError(TraceExplorerError):
    """The what-if cannot be answered as asked (unknown metric, unidentifiable effect...).

    The message says why in words fit for the user.
    """

