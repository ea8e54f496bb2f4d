"""The store reads and writes the panels ask for beside their view state (Compare's run
comparison, What-if's saved causal graph, Replay's replayed run kept as a run): frozen query
objects whose run(store) a worker calls (explorer.session.Session.store_job), so that no
panel reaches the store itself."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CompareQuery:
    """The Compare panel's comparison of runs (analysis.runcompare.compare_runs)."""
    params: dict = field(default_factory=dict)

    def run(self, store):
        from explorer.core.analysis.runcompare import compare_runs
        return compare_runs(store, self.params)


@dataclass(frozen=True)
class GetSetting:
    """A session setting (Store.get_setting), e.g. the edited causal graph."""
    key: str

    def run(self, store):
        return store.get_setting(self.key)


@dataclass(frozen=True)
class SetSetting:
    """Keep a session setting (Store.set_setting)."""
    key: str
    value: Any

    def run(self, store):
        return store.set_setting(self.key, self.value)


@dataclass(frozen=True)
class WriteReplayRun:
    """A replay's result kept as a run of the store (replay.write_run)."""
    result: Any = field(repr=False)
    label: str
    config: dict

    def run(self, store):
        from explorer.core.replay import write_run
        return write_run(store, self.result, label=self.label, source_path=None, config=self.config)
