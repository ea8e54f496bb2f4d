"""The window's panels (their order and areas: explorer.core.sections.WINDOW), shared by the
window (widgets/mainwindow.py) and the report's panel pictures (explorer/reporting/bundle.py)."""
from __future__ import annotations

from explorer.core import sections
from explorer.core.i18n import pgettext
from explorer.widgets.cases import CasesPanel
from explorer.widgets.clusters import ClustersPanel
from explorer.widgets.compare import ComparePanel
from explorer.widgets.comparison import ComparisonPanel
from explorer.widgets.conclusion import ConclusionPanel
from explorer.widgets.distributions import DistributionsPanel
from explorer.widgets.engine import EnginePanel
from explorer.widgets.header import HeaderPanel
from explorer.widgets.heatmap import HeatmapPanel
from explorer.widgets.inputs import InputsPanel
from explorer.widgets.replay import ReplayPanel
from explorer.widgets.runs import RunsPanel
from explorer.widgets.sla import SlaPanel
from explorer.widgets.timeline import TimelinePanel
from explorer.widgets.tree import TreePanel
from explorer.widgets.versions import VersionsPanel
from explorer.widgets.whatif import WhatIfPanel

# The class of each panel; the window's order and areas are the section registry's
# (sections.WINDOW), which tests/test_one_section_list.py checks against this.
CLASSES = {"header": HeaderPanel, "clusters": ClustersPanel, "inputs": InputsPanel,
           "comparison": ComparisonPanel, "distributions": DistributionsPanel, "tree": TreePanel,
           "heatmap": HeatmapPanel, "versions": VersionsPanel, "runs": RunsPanel,
           "compare": ComparePanel, "sla": SlaPanel, "timeline": TimelinePanel,
           "engine": EnginePanel, "whatif": WhatIfPanel, "conclusion": ConclusionPanel,
           "cases": CasesPanel, "replay": ReplayPanel}
# (object name, class, area), in the window's order.
PANELS = [(name, CLASSES[name], area) for name, area in sections.WINDOW]
# Panels whose minimum size must never widen the window: they scroll inside their dock.
SCROLLED = frozenset({"runs", "compare", "timeline", "engine", "whatif", "replay"})
SHOWS = sections.SHOWS  # a panel named otherwise than the section it shows


def title(name: str) -> str:
    """The panel's name on its dock and tab, in the current language: the section registry's
    (sections.panel_title), translated in the "panel" context of the core's catalogue."""
    return pgettext("panel", sections.panel_title(SHOWS.get(name, name)))
