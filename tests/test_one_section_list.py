"""The section registry (explorer/core/analysis/sections.py SECTIONS) is the one list of the
report's sections (issue 32, Deliver 1): the report contract's top-level `required` is the
registry's keys in its order, then meta (but sla_diagnosis, which
analysis/sla_report.lift_into_sla moves into `sla` when both were computed: DESIGN's
`sla.windows` / `sla.diagnosis`), so a section added to the registry and missing from a
report.json fails the schema every test report is checked against (tests/conftest.py)."""
import json

from tests.report_schema import SCHEMA

from explorer.core import sections


def test_schema_requires_every_section_of_the_registry_in_its_order():
    required = json.loads(SCHEMA.read_text(encoding="utf-8"))["required"]
    lifted = {"sla_diagnosis"}  # lift_into_sla: top-level only when sla itself is missing
    assert required == [*(k for k in sections.keys() if k not in lifted), "meta"]
    assert len(required) == len(sections.SECTIONS) >= 18


def test_sla_diagnosis_is_the_one_key_lifted_out_of_the_top_level():
    from explorer.core.analysis.sla_report import lift_into_sla
    doc = {k: {"status": "no_data", "reason": "x"} for k in sections.keys()}
    doc["sla"] = {"thresholds": {}, "attainment": 1.0, "by": {}}
    doc["sla_diagnosis"] = {"windows": [], "diagnosis": {}}
    lift_into_sla(doc)
    assert "sla_diagnosis" not in doc and "windows" in doc["sla"]
