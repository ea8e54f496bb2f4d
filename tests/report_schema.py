"""The report contract as a JSON Schema (resources/report.schema.json, DESIGN.md "Report JSON"):
every report.json a test makes is checked against it (tests/conftest.py wraps the json writer)."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

SCHEMA = Path(__file__).resolve().parent.parent / "resources" / "report.schema.json"


@lru_cache(maxsize=1)
def validator():
    import jsonschema
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(doc: dict) -> list[str]:
    """Every place where `doc` breaks the contract, as 'path: message' (empty when it holds)."""
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}"
            for e in sorted(validator().iter_errors(doc), key=lambda e: list(map(str, e.path)))]


def check(doc: dict) -> None:
    """AssertionError naming every place where `doc` breaks the report contract."""
    bad = problems(doc)
    assert not bad, "report.json breaks resources/report.schema.json:\n" + "\n".join(bad)


def checking_writer(write):
    """`write(doc, out) -> path` (report.WRITERS['json']) that checks the file it wrote."""
    def write_and_check(doc, out):
        path = write(doc, out)
        check(json.loads(Path(path).read_text(encoding="utf-8")))
        return path
    write_and_check.checks_schema = True
    return write_and_check
