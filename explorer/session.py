"""The Qt-side holder of one analysis session: the Store, the cohort, the selection, and signals.

Widgets never touch the store: they ask the Session (set_cluster, set_selection, load_paths,
...) and paint what it sends them. Every store access runs in a worker (explorer.workers), one
at a time; a result that arrives after the cohort or the selection changed is dropped.

What the session sends: Session.resultsChanged(bus.Update), partial updates keyed by the
topics of explorer/core/bus.py (one per section of the registry, bus.SECTION[key], carrying
a bus.Published (the section's frozen result and its report-JSON view), a bus.Failure or
None; and the views that are no section: bus.FRAME, bus.CASES, bus.SELECTION, bus.META, ...,
whose value types bus.py lists). Session.results holds the latest value of each topic.
An analysis that raised arrives as Failure(message, nodata) so the panel can say why in place.
"""
from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pandas as pd
from cachetools import LRUCache
from PySide6.QtCore import QObject, Signal

from explorer.core import bus
from explorer.core.fmt import count
from explorer.core.i18n import _
from explorer.core.names import plural
from explorer.core.store import LOAD_CANCELLED, LoadReport, Store
from explorer.core.store_file import WAREHOUSE_SETTING
from explorer.core.windowdata import (  # noqa: F401 - the Qt-free data, importable here too
    ANALYSIS_KEYS, CASE_LIMIT, REQUEST_LIMIT, REQUEST_COLUMNS, Failure, to_payload,
    frame_bytes, fetch_meta, fetch_evals, fetch_clusters, fetch_cases, fetch_requests,
    _on_cursor, select_payload, analyse, _with_case_cells, analyse_section)
from explorer.session_selection import Selecting
from explorer.workers import JobContext, PanelJobs, Runner

log = logging.getLogger(__name__)

CLUSTER_SETTING = "chosen_cluster"  # settings key: the cluster chosen when the session was saved
RESULTS_KEPT = 12  # cohorts whose results stay in memory (revisiting one repaints at once)


def _frame_budget() -> int:
    """An eighth of the physical memory, at least 512 MiB (see FRAME_BUDGET)."""
    try:
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        ram = 0
    return max(512 * 2**20, ram // 8)


FRAME_BUDGET = _frame_budget()  # bytes of cohort frames kept with those results (frame_bytes):
#   a frame is 34 MB at 1M requests and ~340 MB at 10M. An eighth of the RAM: on a 24 GiB
#   machine nine 10M frames (a revisit repaints at once, ~30 ms, as the 150 ms target of a
#   cluster change asks), on an 8 GiB laptop three; a fixed 512 MiB kept one at 10M and made
#   every revisit rebuild its frame (0.73 s at load 2). A revisited cohort whose frame was
#   dropped rebuilds the frame alone (cohort_frame, a filter of the cached case view); its
#   other results are kept


class Session(QObject, Selecting):
    """Store + cohort (cluster, control) + selection predicate with history + analysis params.

    Signals: storeChanged(), cohortChanged(), selectionChanged(), resultsChanged(bus.Update) (see the
    module doc), selectedCasesChanged(object: frozenset of case_id or None), message(str),
    requestActivated(run_id, request_id): open one request in the Timeline panel.
    A selection made with requests=True (a heatmap cell) also publishes "selected_requests":
    DataFrame of REQUEST_COLUMNS (at most REQUEST_LIMIT rows); the attribute
    selected_requests holds their total count. selection_source says which view made the
    selection: ("heatmap", ix, iy), ("tree", node_id) or None.
    """

    storeChanged = Signal()
    cohortChanged = Signal()
    selectionChanged = Signal()
    resultsChanged = Signal(object)  # not dict: PySide would copy the payload per receiver
    selectedCasesChanged = Signal(object)
    metricChanged = Signal(str)
    message = Signal(str)
    requestActivated = Signal(str, str)

    def __init__(self, store: Store | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.store = store or Store()
        self.runner = Runner(self)            # store jobs: one thread (one DuckDB connection)
        self.compute = Runner(self)           # jobs that read no store (what-if, replay
        #  simulations): never queued behind a store job; one thread, as the What-if panel's
        #  own runner had: beside a store job on 2 cores a second one slowed the what-if down
        self.cluster: str | None = None
        self.eval_id: str | None = None      # one eval only (the eval picker), None = every one
        self.control = "same-category"
        self.params: dict[str, dict] = {}
        self.selection = None
        self.selection_label = ""
        self.selected_cases: frozenset | None = None
        self.selected_requests: int | None = None
        self.selection_source: tuple | None = None
        self.history: list[tuple[Any, str, bool, tuple | None]] = [(None, "", False, None)]
        self.hist_index = 0
        self.results = bus.Update()          # the latest value of each topic of the bus
        self.objects: dict[str, Any] = {}     # last result objects (for predicates)
        self._cache: dict = {}                # cluster-independent sections, per store content,
        #                                     and the last RESULTS_KEPT cohorts' results
        self._frames = self._frame_cache()    # their frames, least recently shown dropped first
        self.deferred: frozenset[str] = frozenset()  # sections computed only when asked (ask):
        #                                   the window's on tabs behind another (MainWindow)
        self._asked: set[str] = set()         # deferred sections asked for once: always run since
        self._missing: set[str] = set()       # deferred sections not computed for this cohort
        self._results_key: tuple | None = None  # the cache key of the cohort results shown
        self.metric: str | None = None        # the metric the distributions show
        self._loads = 0
        self.errors: list[str] = []           # loads / session opens that failed, for --screenshot

    # -- loading ----------------------------------------------------------------------------
    def load_paths(self, paths: list[str]) -> None:
        """Load files/folders in a worker, then bind cases (pipeline.prepare) and refresh."""
        paths = [str(p) for p in paths]
        self._loads += 1
        from explorer.core.preload import preload
        preload()  # the analyses' scipy / sklearn imports beside the load (DuckDB frees the GIL)

        def job(ctx: JobContext):
            reports = self.store.load_paths(
                paths, progress=lambda i, n, p: ctx.progress(i, n, _("Loading {what}").format(
                        what=p)),
                cancelled=ctx.cancelled)
            return self._after_load(ctx, reports)
        self.runner.submit(f"load{self._loads}", job, self._loaded, self._failed,
                           label=_("Loading {what}").format(what=plural(len(paths), "file")))

    def load_demo(self) -> bool:
        """Load the simulated demo workload (explorer.demo.load_demo) in a worker; True."""
        import explorer.demo as demo
        self._loads += 1

        def job(ctx: JobContext):
            reports = demo.load_demo(self.store, progress=lambda d, n, what="": ctx.progress(
                d, n, _("Demo: {step}").format(step=str(what))))
            return self._after_load(ctx, list(reports or []), prepare=False)  # load_demo prepares
        self.runner.submit(f"load{self._loads}", job, self._loaded, self._failed,
                           label=_("Loading the demo workload"))
        return True

    def open_session(self, path: str) -> None:
        """Replace the store by a saved session (Store.open) and refresh everything."""
        self.runner.cancel()

        def job(ctx: JobContext):
            new = Store.open(path)
            old, self.store = self.store, new
            old.close()
            # files read in place that moved or changed: said as failed inputs (core.inplace)
            payload = self._after_load(ctx, [LoadReport(path="", error=m) for m in new.detached],
                                       prepare=False)
            payload["chosen_cluster"] = new.get_setting(CLUSTER_SETTING)  # when it was saved
            payload["warehouse"] = new.get_setting(WAREHOUSE_SETTING)  # saved while connected
            return payload

        def done(payload: dict) -> None:
            wh = payload.pop("warehouse", None)
            self._loaded(payload)
            if wh:  # its shape checked when the file was opened (store_file.validate_settings)
                self._reconnect(wh)
        self.runner.submit("open", job, done, self._failed, label=_("Opening session"))

    def _reconnect(self, wh: dict) -> None:
        """A session saved while connected to a warehouse: connect to it again (the requests
        live there; a token the URL carried was not saved, and a refusal is one status line)."""
        self.message.emit(_("Reconnecting to the session's warehouse {url} ({table})")
                          .format(url=wh["url"], table=wh["table"]))
        columns = ",".join(f"{k}={v}" for k, v in (wh.get("columns") or {}).items())
        self.connect_warehouse(wh["url"], wh["table"], columns)  # warehouse.parse_columns reads it

    def connect_warehouse(self, url: str, table: str, columns: str = "") -> None:
        """Take the requests from a warehouse (explorer.core.warehouse): the loaded eval cases
        stay here and are bound in the engine; every analysis then runs there. A running
        remote query stops on Cancel. Failures (unreachable server, missing table or columns)
        arrive as one status-bar line."""
        self.runner.cancel()
        labels = {"connect": _("Starting a local Spark Connect server")
                  if url == "spark:local" else _("Connecting to the warehouse"),
                  "bind": _("Binding cases to the warehouse requests")}

        def job(ctx: JobContext):
            from explorer.core.warehouse import open_warehouse, parse_columns
            old = self.store
            local = old.local if getattr(old, "remote", False) else old
            ws = open_warehouse(local, url, table, parse_columns(columns),
                                cancelled=ctx.cancelled,
                                progress=lambda step: ctx.progress(0, 0, labels[step]))
            if ctx.cancelled():
                ws.source.close()
                ctx.check()
            # the store is swapped for good only once its panels' payload is read: a query
            # failing there (a Runs statistic the engine refused) used to leave the window on
            # a warehouse no panel was told about, whose analyses never ran
            self.store = ws
            try:
                payload = self._after_load(ctx, [], prepare=False)
            except BaseException:
                self.store = old
                ws.source.close()
                raise
            if old is not local:
                old.source.close()  # the previous warehouse connection
            return payload

        def done(payload: dict) -> None:
            self._loaded(payload)
            meta = self.store.engine_meta() if getattr(self.store, "remote", False) else {}
            self.message.emit(_("Connected to {url}: {requests} requests in {table}").format(
                    url=str(meta.get("url")), requests=count(meta.get("table_rows") or 0),
                    table=table))
        self._loads += 1
        self.runner.submit(f"load{self._loads}", job, done, self._failed,
                           label=labels["connect"])

    def rescan(self) -> None:
        """Re-read inputs, clusters and counts of the current store (after it was filled
        directly, e.g. by a benchmark or a test) and rerun the analyses."""
        self._loads += 1
        self.runner.submit(f"load{self._loads}", lambda ctx: self._after_load(ctx, [], prepare=False),
                           self._loaded, self._failed, label=_("Reading the session"))

    def relocate_file(self, old: str, new: str) -> None:
        """Point the in-place file recorded at `old` (moved since the session was saved) to
        `new` (core.inplace_session.relocate: refused unless its SHA-256 is the one loaded),
        then refresh everything as after an open. A refusal is one status-bar line."""
        self.runner.cancel()

        def job(ctx: JobContext):
            from explorer.core.inplace_session import relocate
            relocate(self.store, old, new)
            return self._after_load(ctx, [], prepare=False)
        self._loads += 1
        self.runner.submit(f"load{self._loads}", job, self._loaded, self._failed,
                           label=_("Locating {path}").format(path=new))

    def save_session(self, path: str, on_done=None, with_data: bool = False) -> None:
        """Write the store to a .duckdb file (Store.save_as) in a worker, with the chosen
        cluster (reopening the session chooses it again); with_data: the rows of the files
        read in place too (a session that opens without them)."""
        cluster = self.cluster

        def job(ctx: JobContext):
            self.store.set_setting(CLUSTER_SETTING, cluster)
            return self.store.save_as(path, with_data=with_data)
        self.runner.submit("save", job,
                           lambda _r: (self.message.emit(_("Session saved to {path}").format(
                                   path=path)),
                                       on_done and on_done()),
                           self._failed, label=_("Saving session"))

    def _after_load(self, ctx: JobContext, reports: list, prepare: bool = True) -> dict:
        store = self.store
        runs = None  # the runs' rows, read beside the binding (they read no case)
        with ThreadPoolExecutor(1, thread_name_prefix="runs") as ex:
            if prepare and any(not r.error and not r.skipped_file for r in reports):
                from explorer.core.pipeline import prepare
                if not getattr(store, "remote", False):
                    runs = ex.submit(_on_cursor, store, self._runs_payload)
                ctx.progress(0, 0, _("Binding cases to requests"))
                prepare(store)
            # the Timeline's request_id indexes are built when it first opens a request
            # (core.timeline._run_stats), not here: 0.7 s of CPU per load at 1M requests for
            # lookups that scan in ~45 ms without them (~38 ms with)
            evals = fetch_evals(store)
            ev = self.eval_id if self.eval_id in {e["eval_id"] for e in evals} else None
            from explorer.core.inplace_session import detached_files
            payload = {"inputs": store.input_reports(), "evals": evals, "eval_id": ev,
                       "detached_files": detached_files(store),
                       "clusters": fetch_clusters(store, ev),
                       "meta": fetch_meta(store),
                       "load_failed": [r.error for r in reports if r.error]}
            return {**payload, **(runs.result() if runs is not None else self._runs_payload())}

    def _runs_payload(self, store: Store | None = None) -> dict:
        """The Runs, Inputs (run rows) and Replay panels' payload of `store` (default the
        session's)."""
        from explorer.core.report_runs import run_versions_section, runs_section
        from explorer.core.viewstate.replay import replay_runs
        store = store or self.store
        return {"runs": runs_section(store), "run_versions": run_versions_section(store),
                "replay_runs": self._replay_runs(replay_runs, store)}

    def _replay_runs(self, replay_runs, store: Store) -> list:
        """The runs the Replay panel offers: none on a warehouse (replay reads a whole trace
        into this process, as the report skips it there), and none, logged, when the query
        fails, so a load or a connect never fails for the Replay panel's sake."""
        if getattr(store, "remote", False):
            return []
        try:
            return replay_runs(store)
        except Exception:  # noqa: BLE001 - the Replay panel then offers no run
            log.exception("runs for the Replay panel not listed")
            return []

    def set_run(self, run_id: str, engine_version: str | None = None,
                label: str | None = None, **fields: str) -> None:
        """The user's engine version, label, engine and / or workload of one run
        (explorer.core.runs.set_run, kept with the session); then the runs are repainted and
        every analysis reruns (the version comparison depends on it)."""
        def job(ctx: JobContext):
            from explorer.core.runs import set_run
            set_run(self.store, run_id, engine_version=engine_version, label=label, **fields)
            return self._runs_payload()

        def done(payload: dict) -> None:
            self._forget()
            self._publish(payload)
            self.refresh()
        self.runner.submit(f"set_run:{run_id}", job, done, self._failed,
                           label=_("Updating run {run}").format(run=run_id))

    def apply_version_overrides(self, overrides: list) -> None:
        """--engine-version PATH=VERSION pairs, applied once the files are loaded (a PATH that
        matched no run is said in the status bar)."""
        def job(ctx: JobContext):
            from explorer.core.runs import apply_version_overrides
            return apply_version_overrides(self.store, list(overrides)), self._runs_payload()

        def done(result) -> None:
            problems, payload = result
            for p in problems:
                self.message.emit(p)
            self._forget()
            self._publish(payload)
            self.refresh()
        self._loads += 1
        self.runner.submit(f"load{self._loads}", job, done, self._failed,
                           label=_("Setting engine versions"))

    def _loaded(self, payload: dict) -> None:
        self._forget()
        failed = payload.pop("load_failed", None) or []
        if failed:  # the status bar names them; the Inputs panel lists each with its reason
            text = (_("{files} could not be read: {names}").format(
                    files=plural(len(failed), "file"),
                    names="; ".join(failed[:3]) + (" …" if len(failed) > 3 else "")))
            if payload.get("detached_files"):  # a reopened session's moved files: say the way back
                text += " " + _("(File > Locate a moved file finds it again)")
            self.message.emit(text)
        self.eval_id = payload.pop("eval_id", self.eval_id)
        names = [c["name"] for c in payload["clusters"]]
        chosen = payload.pop("chosen_cluster", None)  # a reopened session's own choice
        if isinstance(chosen, str) and chosen in names:
            self.cluster = chosen
        if self.cluster not in names:
            self.cluster = names[0] if names else None
        self._publish(payload)
        self.storeChanged.emit()
        self.selection, self.selection_label, self.selected_cases = None, "", None
        self.selected_requests, self.selection_source = None, None
        self.history, self.hist_index = [(None, "", False, None)], 0
        self.selectionChanged.emit()
        self.selectedCasesChanged.emit(None)
        self.cohortChanged.emit()
        self.refresh()

    @staticmethod
    def _frame_cache() -> LRUCache:
        """cohort results key -> (frame, frame_bytes): at most FRAME_BUDGET bytes, the least
        recently shown dropped first (one larger than the budget is not kept)."""
        return LRUCache(FRAME_BUDGET, getsizeof=lambda v: v[1])

    def _forget(self) -> None:
        """The store's content changed: no cached section, cohort result or frame holds."""
        self._cache, self._frames = {}, self._frame_cache()

    def _failed(self, err: BaseException) -> None:
        """A job failed: one line in the status bar, never a traceback. An unexpected fault
        (not a TraceExplorerError, which explains itself) has its details in the error log,
        whose path the line gives."""
        from explorer.core import errlog
        from explorer.core.errors import TraceExplorerError
        text = str(err) if isinstance(err, TraceExplorerError) and str(err) else \
            f"{errlog.describe(err)} ({errlog.record(err, 'background job')})"
        self.errors.append(text)
        self.message.emit(_("Error: {error}").format(error=text))

    def publish(self, payload: dict, objects: dict | None = None) -> None:
        """Send `payload` (section key or view name -> value) on the bus as one bus.Update
        (bus.Update.of: a section's value becomes a Published, with its result object from
        `objects` when given) and keep it in self.results."""
        update = bus.Update.of(payload, objects)
        self.results = self.results.merged(update)
        self.resultsChanged.emit(update)

    _publish = publish

    @property
    def data(self) -> dict[str, Any]:
        """The latest values by name as panels paint them (bus.Update.names): for tests and
        scripts; the widgets read the bus only by topic (tests/test_layers.py)."""
        return self.results.names()

    # -- cohort and analyses ----------------------------------------------------------------
    def set_cluster(self, name: str | None) -> None:
        """Make `name` the badcase cluster of the cohort and rerun every analysis."""
        if name == self.cluster:
            return
        self.cluster = name
        self.cohortChanged.emit()
        self.clear_selection(record=False)
        self.refresh()

    def set_eval(self, eval_id: str | None) -> None:
        """Analyse one eval only (as `report --eval`), None for every loaded eval pooled: its
        clusters are listed again and the analyses rerun."""
        if eval_id == self.eval_id:
            return
        self.eval_id = eval_id
        self.clear_selection(record=False)

        def done(payload: dict) -> None:
            names = [c["name"] for c in payload["clusters"]]
            if self.cluster not in names:
                self.cluster = names[0] if names else None
            self._publish(payload)
            self.cohortChanged.emit()
            self.refresh()
        self.runner.submit("evals", lambda ctx: {"clusters": fetch_clusters(self.store, eval_id)},
                           done, self._failed, label=_("Listing clusters"))

    def set_control(self, control: str) -> None:
        """'same-category' (default), 'all-correct' or 'outside-cluster'."""
        if control != self.control:
            self.control = control
            self.cohortChanged.emit()
            self.refresh()

    def set_params(self, section: str, **values) -> None:
        """Analysis parameters, e.g. set_params('tree', max_depth=4); reruns the analyses."""
        self.params.setdefault(section, {}).update(values)
        self.refresh()

    def cohort(self):
        """The analysis Cohort of the current cluster and control."""
        from explorer.core.analysis import Cohort
        return Cohort(cluster=self.cluster, control=self.control, selection=None,
                      eval_id=self.eval_id)

    def refresh(self) -> None:
        """Recompute every analysis of the current cohort in a worker (older runs are dropped)."""
        cohort = self.cohort()
        params = {k: dict(v) for k, v in self.params.items()}

        store, cache = self.store, self._cache
        key = ("cohort-results", self.cluster, self.control, self.eval_id,
               repr(sorted(params.items())))
        self._results_key = key
        for k in self.deferred:
            self.runner.cancel(f"section:{k}")
        if key in cache:  # a cohort seen before on this store: repaint at once
            self.runner.cancel("analysis")
            payload, objects = cache[key]
            if "frame" not in payload:  # kept apart (self._frames) or dropped for its bytes
                kept = self._frames.get(key)
                if kept is None:
                    self._rebuild_frame(key, cohort)
                    return
                payload = {**payload, "frame": kept[0]}
            self._show_cached(payload, objects)
            return
        # without eval cases the cohort's analyses are quick (no data): nothing is deferred
        skip = self.deferred - self._asked if (self.results.view(bus.META) or {}).get("cases") else set()
        keys = tuple(k for k in ANALYSIS_KEYS if k not in skip)

        def job(ctx: JobContext):
            return analyse(store, cohort, params, cache, ctx, keys)

        def done(result) -> None:
            payload, objects, nbytes = result
            recent = [k for k in cache if k[0] == "cohort-results"]
            for old in recent[:max(0, len(recent) - RESULTS_KEPT + 1)]:
                del cache[old]
                self._frames.pop(old, None)
            cache[key] = self._keep(key, payload, nbytes, cache), objects
            self._analysed((payload, objects))
        self.runner.submit("analysis", job, done, self._analysis_failed,
                           label=_("Analysing cohort"), on_partial=self._analysed_part)

    def _keep(self, key: tuple, payload: dict, nbytes: int, cache: dict) -> dict:
        """The cohort's payload as its cache entry keeps it: a frame goes to self._frames
        (kept while the budget allows) and the payload keeps the rest. A result for a store
        content since forgotten (cache is no longer self._cache) keeps no frame."""
        frame = payload.get("frame")
        if not isinstance(frame, pd.DataFrame):
            return payload  # a Failure: small, kept with the rest
        if cache is self._cache:
            self._frames.pop(key, None)
            if nbytes <= FRAME_BUDGET:
                self._frames[key] = (frame, nbytes)
        return {k: v for k, v in payload.items() if k != "frame"}

    def _rebuild_frame(self, key: tuple, cohort) -> None:
        """A revisited cohort whose frame was dropped (FRAME_BUDGET): build the frame again
        (cohort_frame, as analyse did) in a worker, then show the kept results with it."""
        store, cache = self.store, self._cache

        def job(ctx: JobContext):
            from explorer.core.analysis import cohort_frame
            frame = cohort_frame(store, cohort)
            return frame, frame_bytes(frame)

        def done(result) -> None:
            frame, nbytes = result
            if cache is not self._cache or key not in cache:  # forgotten meanwhile: rerun
                self.refresh()
                return
            payload, objects = cache[key]
            self._keep(key, {**payload, "frame": frame}, nbytes, cache)
            self._show_cached({**payload, "frame": frame}, objects)
        self.runner.submit("analysis", job, done, self._analysis_failed,
                           label=_("Analysing cohort"))

    def _show_cached(self, payload: dict, objects: dict) -> None:
        """Publish a cohort's kept results (frame included) as its analysis did."""
        self.objects = dict(objects)
        self._publish(dict(payload), objects)
        self._defer_missing(payload)
        self._reselect()

    def _analysed_part(self, part) -> None:
        payload, objects = part
        self.objects = objects
        self._publish(payload, objects)

    def _analysed(self, result) -> None:
        payload, objects = result
        self.objects = objects
        self._publish({k: v for k, v in payload.items()
                       if k not in ("frame", "cases", "cohort", "comparison", "tree")}, objects)
        self._defer_missing(payload)
        self._reselect()

    def _defer_missing(self, payload: dict) -> None:
        """The deferred sections absent from the cohort's results: published as None (no panel
        keeps a figure of another cohort), computed when asked (ask); those asked for before,
        at once."""
        self._missing = {k for k in self.deferred if k not in payload}
        if self._missing:
            self._publish(dict.fromkeys(sorted(self._missing)))
        for k in sorted(self._missing & self._asked):
            self.ask(k)

    def computing(self, key: str) -> bool:
        """True while a deferred section asked for (ask) is being computed: its panel says so."""
        return f"section:{key}" in self.runner.live_keys()

    def ask(self, key: str) -> None:
        """A deferred section's panel came on screen (or is read: Copy, a test): compute the
        section for the current cohort in a worker, once, then publish it (and keep it with the
        cohort's results). Does nothing for a section computed or being computed."""
        if key not in self._missing:
            return
        self._missing.discard(key)
        self._asked.add(key)
        cohort, store, cache, rkey = self.cohort(), self.store, self._cache, self._results_key
        params = {k: dict(v) for k, v in self.params.items()}

        def job(ctx: JobContext):
            return analyse_section(store, cohort, params, cache, key, ctx)

        def done(result) -> None:
            payload, obj = result
            if rkey != self._results_key:  # the cohort changed meanwhile: its own run has it
                return
            if rkey in cache:
                pay, objs = cache[rkey]
                cache[rkey] = ({**pay, key: payload}, {**objs, key: obj})
            from explorer.core.analysis import SectionError
            if not isinstance(obj, SectionError):
                self.objects = {**self.objects, key: obj}
            self._publish({key: payload}, {key: obj})
            if key == "heatmap":  # the selection's cells in it
                self._reselect()

        def failed(err: BaseException) -> None:
            if rkey == self._results_key:
                self._missing.add(key)  # asked again when next shown
            self._failed(err)
        self.runner.submit(f"section:{key}", job, done, failed,
                           label=_("Analysing cohort"))

    def _reselect(self) -> None:
        """The analyses were rerun under a selection (new parameters, F5): answer the same
        selection again, so no view keeps figures of the results before."""
        if self.selection is None:
            return
        pred, label, requests, source = self.history[self.hist_index]
        if pred is self.selection:
            self.set_selection(pred, label, record=False, requests=requests, source=source)

    def _analysis_failed(self, err: BaseException) -> None:
        self._publish({k: to_payload(err) for k in ANALYSIS_KEYS + ("frame",)})

    def rename_cluster(self, old: str, new: str) -> None:
        """Rename a badcase cluster (clusters.rename_cluster) and refresh the list."""
        if not new or new == old:
            return

        def job(ctx):
            from explorer.core.clusters import rename_cluster
            rename_cluster(self.store, old, new)
            return {"clusters": fetch_clusters(self.store)}

        def done(payload):
            self._forget()
            if self.cluster == old:
                self.cluster = new
            self._publish(payload)
            self.cohortChanged.emit()
            self.refresh()
        self.runner.submit("rename", job, done, self._failed, label=_("Renaming cluster"))

    def set_metric(self, metric: str) -> None:
        """Focus one metric (a comparison row click shows its distribution)."""
        if metric and metric != self.metric:
            self.metric = metric
            self.metricChanged.emit(metric)

    def store_job(self, key: str, query, done, failed=None, label: str = "",
                  progress: str | None = None, **opts) -> None:
        """Run a view-state query on the store's worker: query.run(store), with progress and
        cancelled from the job when `progress` names its step; done(result) / failed(error)
        on the GUI thread. The panels reach the store only so (explorer.core.viewstate)."""
        store = self.store

        def job(ctx: JobContext):
            if progress is None:
                return query.run(store)
            return query.run(store, progress=lambda d, n: ctx.progress(d, n, progress),
                             cancelled=ctx.cancelled)
        self.runner.submit(key, job, done, failed or self._failed, label=label, **opts)

    def runners(self) -> list[Runner]:
        """Every job of the window runs on one of these (store jobs, then store-free ones)."""
        return [self.runner, self.compute]

    def panel_jobs(self, panel: QObject) -> PanelJobs:
        """A panel's view of the store-free jobs (its own progress, Cancel and pending)."""
        return PanelJobs(self.compute, panel)

    def cancel(self) -> None:
        """Cancel every running or queued job (the status bar's Cancel). A load in progress
        rolls back the file it was reading (Store.load_paths); the files loaded before it
        stay, and the window is refreshed from the store to show exactly that."""
        loading = any(k.startswith("load") for k in self.runner.live_keys())
        self.runner.cancel()
        # a deferred section whose job was cancelled is asked again when its panel is next shown
        self._missing |= {k for k in self.deferred if self.results.get(bus.SECTION[k]) is None}
        self.compute.cancel()
        if getattr(self.store, "remote", False):  # stop the warehouse query in flight
            self.store.source.cancel()
        if loading:
            self._loads += 1

            def job(ctx: JobContext):
                from explorer.core.pipeline import prepare
                prepare(self.store)   # the files committed before the cancel, bound
                payload = self._after_load(ctx, [], prepare=False)
                undone = [r.path for r in payload["inputs"]
                          if r.error and r.error.endswith(LOAD_CANCELLED)]
                payload["cancel_note"] = undone[-1] if undone else None
                return payload

            def done(payload: dict) -> None:
                path = payload.pop("cancel_note", None)
                self._loaded(payload)
                self.message.emit(
                    _("Loading cancelled: {path} was rolled back; the files loaded before it stay.").format(
                            path=path) if path else
                    _("Loading cancelled; the files loaded before stay."))
            self.runner.submit(f"load{self._loads}", job, done, self._failed,
                               label=_("Reading the session"))
