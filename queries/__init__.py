"""explorer.queries (pyproject.toml package-dir): importable under that name only."""
if __name__ != "explorer.queries":
    raise ImportError(f"import explorer.queries, not {__name__} (one installed name: explorer)")
