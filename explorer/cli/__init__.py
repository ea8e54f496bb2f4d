"""Subcommands of the trace-explorer command line."""
