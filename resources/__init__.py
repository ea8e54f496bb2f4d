"""explorer.resources (pyproject.toml package-dir): importable under that name only."""
if __name__ != "explorer.resources":
    raise ImportError(f"import explorer.resources, not {__name__} (one installed name: explorer)")
