"""The results bus, Qt-free: what explorer.session sends the panels (Session.resultsChanged)
and keeps as the latest of each (Session.results).

An update is an `Update`: a read-only mapping from `Topic` to a value, and nothing else: a
string key raises TypeError (tests/test_bus.py; tests/test_layers.py fails on a widget that
reads the bus by a string again). There are two kinds of topic:

- one per entry of the section registry (core.sections.SECTIONS), `SECTION[key]`, in the
  registry's order. Its value is a `Published` (the section's result), a `Failure` (why there
  is none) or None (not computed for this cohort);
- the views that are no section (the list below), each with the type of its value.

`Published` carries the section's frozen result object (`result`, e.g. analysis.TreeResult)
and its report-JSON form (`view`, its to_dict(), built in the worker): the panels paint
`view`, because the report renderer draws the same panels from a report.json, where only the
JSON exists (there `result` is None). Predicates and follow-up analyses (a tree node's cases,
a heatmap cell) read `result`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from . import sections
from .sections import SECTIONS, Section


@dataclass(frozen=True)
class Topic:
    """One key of the bus: a section of the registry (`section` set) or a view (`doc` says
    what its value is)."""
    name: str
    section: Section | None = None
    doc: str = ""

    def __repr__(self) -> str:
        return f"Topic({self.name!r})"


@dataclass(frozen=True)
class Failure:
    """An analysis (or load) that did not produce a result. nodata=True when the reason is
    missing data (core.errors.NoData) rather than a fault; message is for the user."""
    message: str
    nodata: bool = False


@dataclass(frozen=True)
class Published:
    """One section's result on the bus: its registry entry, its report-JSON form (what the
    panels paint; for inputs the LoadReports of the store) and its frozen result object (None
    when only the JSON is known: the report renderer, the window's run-level payloads)."""
    section: Section
    view: Any
    result: Any = None


SECTION: dict[str, Topic] = {s.key: Topic(s.key, s) for s in SECTIONS}


def _view(name: str, doc: str) -> Topic:
    assert name not in SECTION, name  # a view is no section
    return Topic(name, None, doc)


# The views that are no section (a section's own topic is SECTION[key]).
EVALS = _view("evals", "list[dict]: the loaded evals (eval_id, model, cases), the eval picker")
META = _view("meta", "dict: simulated (bool), demo_note (str|None), cases, requests, runs; in a "
             "report's pictures, the report's meta")
FRAME = _view("frame", "pandas.DataFrame from analysis.cohort_frame (one row per cohort case), "
              "or a Failure")
CASES = _view("cases", "pandas.DataFrame(case_id, prompt, prediction, correct, cluster, "
              "category, run_id, request_id, level) of the cohort, or of the selection")
SELECTION = _view("selection", "dict of analysis.selected.analyse_selection for the current "
                  "selection, None when nothing is selected, or a Failure")
SELECTED_REQUESTS = _view("selected_requests", "pandas.DataFrame of windowdata.REQUEST_COLUMNS "
                          "of a heatmap cell's requests (at most REQUEST_LIMIT), or None")
REPLAY_RUNS = _view("replay_runs", "list[ReplayRun]: the runs whose requests can be replayed "
                    "(viewstate.replay.replay_runs)")
DETACHED_FILES = _view("detached_files", "list: a reopened session's input files that moved "
                       "(inplace_session.detached_files)")
VIEWS: dict[str, Topic] = {t.name: t for t in (EVALS, META, FRAME, CASES, SELECTION,
                                               SELECTED_REQUESTS, REPLAY_RUNS, DETACHED_FILES)}
TOPICS: dict[str, Topic] = SECTION | VIEWS


def topic(name: str) -> Topic:
    """The topic of a section key or a view's name; KeyError for any other name."""
    return TOPICS[name]


def published(key: str, value: Any, result: Any = None) -> Any:
    """Section `key`'s value as the bus carries it: a Published, a Failure or None."""
    if value is None or isinstance(value, (Published, Failure)):
        return value
    return Published(sections.BY_KEY[key], value, result)


def view(value: Any) -> Any:
    """What a panel paints of a value of the bus: a Published's view, anything else as it is."""
    return value.view if isinstance(value, Published) else value


class Update(Mapping[Topic, Any]):
    """One message of the bus: Topic -> value (see the module doc), read-only."""

    __slots__ = ("_d",)

    def __init__(self, items: Mapping[Topic, Any] | None = None):
        d = dict(items or {})
        for t in d:
            _check(t)
        self._d = d

    @classmethod
    def of(cls, payload: Mapping[str, Any], objects: Mapping[str, Any] | None = None) -> "Update":
        """The update of a producer's payload (section key or view name -> value): section
        values become Published (result: objects[key] when given) unless a Failure or None.
        Raises KeyError for a name that is neither a section nor a view."""
        objects = objects or {}
        return cls({topic(k): published(k, v, objects.get(k)) if k in SECTION else v
                    for k, v in payload.items()})

    def __getitem__(self, t: Topic) -> Any:
        return self._d[_check(t)]

    def __contains__(self, t: object) -> bool:
        return _check(t) in self._d

    def __iter__(self) -> Iterator[Topic]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def view(self, t: Topic, default: Any = None) -> Any:
        """The value of `t` as a panel paints it (view()), `default` when absent."""
        return view(self._d[t]) if _check(t) in self._d else default

    def ok(self, t: Topic) -> Any:
        """The painted value of `t` when it is a result (not a Failure, not absent), else None."""
        v = self._d.get(_check(t))
        return None if isinstance(v, Failure) else view(v)

    def merged(self, other: "Update") -> "Update":
        """This update with `other`'s values over it (the session's latest of each topic)."""
        return Update({**self._d, **other._d})

    def names(self) -> dict[str, Any]:
        """name -> painted value (view()): for tests and scripts that look at the bus."""
        return {t.name: view(v) for t, v in self._d.items()}

    def __repr__(self) -> str:
        return f"Update({sorted(t.name for t in self._d)})"


def _check(t: object) -> Topic:
    if not isinstance(t, Topic):
        raise TypeError(f"the results bus is keyed by explorer.core.bus topics, not {t!r} "
                        "(SECTION[key] or a view such as bus.FRAME)")
    return t


__all__ = ["Topic", "Failure", "Published", "Update", "SECTION", "VIEWS", "TOPICS", "topic",
           "published", "view"] + [n for n, v in list(globals().items()) if isinstance(v, Topic)]
