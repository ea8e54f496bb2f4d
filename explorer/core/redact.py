"""Credentials out of connection strings, before anything is saved or shown.

Dependency-free on purpose: the window's warehouse dialog redacts the URL it remembers
even when the optional Spark extra (pyspark, sqlglot) is not installed.
"""
from __future__ import annotations

import re

_SECRET = re.compile(r";\s*(token|password|secret|access_token|api_key)\s*=[^;]*", re.I)


def redact_url(url: str) -> str:
    """The URL without credentials (sc://host:port;token=... -> sc://host:port): what may be
    saved in settings or written into a report."""
    return _SECRET.sub("", url or "")
