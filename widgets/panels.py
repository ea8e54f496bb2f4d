"""The one list of the window's panels, shared by the window (widgets/mainwindow.py) and the
report's panel pictures (explorer/reporting/bundle.py)."""
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

# The one list of panels: (object name, class, area).
# Areas: top, left, centre, right, bottom. Centre panels are tabbed, first one in front.
PANELS = [
    ("header", HeaderPanel, "top"),
    ("clusters", ClustersPanel, "left"),
    ("inputs", InputsPanel, "left"),
    ("comparison", ComparisonPanel, "centre"),
    ("distributions", DistributionsPanel, "centre"),
    ("tree", TreePanel, "centre"),
    ("heatmap", HeatmapPanel, "centre"),
    ("versions", VersionsPanel, "centre"),
    ("runs", RunsPanel, "centre"),
    ("compare", ComparePanel, "centre"),
    ("sla", SlaPanel, "centre"),
    ("timeline", TimelinePanel, "centre"),  # full height: axis labels fit
    ("engine", EnginePanel, "centre"),
    ("whatif", WhatIfPanel, "centre"),
    ("conclusion", ConclusionPanel, "right"),
    ("cases", CasesPanel, "bottom"),
    ("replay", ReplayPanel, "centre"),  # a table beside a chart: the analysis area's height
]
# Panels whose minimum size must never widen the window: they scroll inside their dock.
SCROLLED = frozenset({"runs", "compare", "timeline", "engine", "whatif", "replay"})
# A panel named otherwise than the section it shows (explorer.core.sections).
SHOWS = {"header": "cohort"}


def title(name: str) -> str:
    """The panel's name on its dock and tab, in the current language: the section registry's
    (sections.panel_title), translated in the "panel" context of the core's catalogue."""
    return pgettext("panel", sections.panel_title(SHOWS.get(name, name)))
