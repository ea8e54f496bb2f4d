"""explorer.widgets (pyproject.toml package-dir): importable under that name only."""
if __name__ != "explorer.widgets":
    raise ImportError(f"import explorer.widgets, not {__name__} (one installed name: explorer)")
