"""Background work for the window: QThreadPool jobs with progress, cancel and stale-result dropping.

Every load and analysis runs in a `Job` on `Runner`'s pool, never on the UI thread. Jobs carry a
*key* ("load", "analysis", "selection", ...); submitting a new job under a key makes every older
job of that key stale: a stale job is asked to stop (its `cancelled()` returns True), and if it
still finishes, its result is dropped instead of delivered. So a result that arrives after the
user changed the cluster or the selection never repaints anything.

Store access is serialised: the default pool has one thread, because one DuckDB connection must
not be used by two threads at once (explorer.core.store). Jobs queue behind each other; a job
that became stale while waiting is skipped without running.
"""
from __future__ import annotations

import itertools
import logging
import time
import traceback
import warnings
from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from explorer.core.errors import Cancelled  # raised by JobContext.check; core code raises it too

log = logging.getLogger(__name__)


class JobContext:
    """Handed to the job function: `progress(done, total, text)`, `cancelled() -> bool`,
    `check()` (raises Cancelled when cancelled)."""

    def __init__(self, job: "Job"):
        self._job = job

    def progress(self, done: int, total: int, text: str = "") -> None:
        if not self.cancelled():
            _emit(self._job.signals.progress, self._job.key, int(done), int(total), str(text))

    def cancelled(self) -> bool:
        return self._job.runner.is_stale(self._job)

    def check(self) -> None:
        if self.cancelled():
            raise Cancelled()

    def publish(self, partial: Any) -> None:
        """Deliver a partial result now (on_partial on the UI thread, dropped when stale)."""
        if not self.cancelled():
            _emit(self._job.signals.partial, self._job, partial)


class _JobSignals(QObject):
    progress = Signal(str, int, int, str)   # key, done, total, text
    done = Signal(object, object, object)   # job, result, error text (None on success)
    partial = Signal(object, object)        # job, partial result (JobContext.publish)


class Job(QRunnable):
    """One unit of work: fn(ctx) -> result. Created by Runner.submit."""

    def __init__(self, runner: "Runner", key: str, gen: int, fn: Callable[[JobContext], Any],
                 label: str):
        super().__init__()
        self.setAutoDelete(False)  # the Runner keeps it until its result is handled
        self.runner, self.key, self.gen, self.fn, self.label = runner, key, gen, fn, label
        self.signals = _JobSignals()
        self.dropped = False  # set when its result was thrown away (Runner._finished)

    def run(self) -> None:  # worker thread
        ctx = JobContext(self)
        if ctx.cancelled():
            _emit(self.signals.done, self, None, Cancelled())
            return
        try:
            result = self.fn(ctx)
        except Cancelled as e:
            _emit(self.signals.done, self, None, e)
        except BaseException as e:  # noqa: BLE001 - a job must never take the app down
            if not ctx.cancelled():
                from explorer.core.errors import TraceExplorerError
                if isinstance(e, TraceExplorerError):  # an expected, explained failure
                    log.info("job %s failed: %s", self.label, e)
                else:
                    log.warning("job %s failed:\n%s", self.label, traceback.format_exc())
            _emit(self.signals.done, self, None, e)
        else:
            _emit(self.signals.done, self, result, None)


def _emit(signal, *args) -> None:
    """Emit from a worker thread; when the app is shutting down and the receiver is gone,
    there is nobody left to tell, so the RuntimeError is swallowed."""
    try:
        signal.emit(*args)
    except RuntimeError:
        pass


class Runner(QObject):
    """Runs jobs off the UI thread and delivers only fresh results, on the UI thread.

    submit(key, fn, on_result, on_error=None, label="", on_partial=None, on_progress=None) -> Job
        fn(ctx) runs in the pool; on_result(result) / on_error(exception) run on the UI thread,
        only if no newer job of the same key was submitted and cancel(key) was not called;
        so do on_partial(part) for every ctx.publish(part) the job makes and
        on_progress(done, total, text) for every ctx.progress of this job alone.
    Signals: busy(str label, int done, int total) for the status bar (total 0 = unknown),
             idle() when nothing is queued or running, dropped(str key) when a stale result
             was thrown away (tests watch it), ended(Job) when a job's result is back,
             just before it is delivered or dropped (job.dropped says which).
    """

    busy = Signal(str, int, int)
    idle = Signal()
    dropped = Signal(str)
    ended = Signal(object)

    def __init__(self, parent: QObject | None = None, threads: int = 1):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(threads)
        self._gen: dict[str, int] = {}
        self._counter = itertools.count(1)
        self._live: dict[int, tuple[Job, Callable, Callable | None]] = {}

    def submit(self, key: str, fn: Callable[[JobContext], Any], on_result: Callable[[Any], None],
               on_error: Callable[[BaseException], None] | None = None, label: str = "",
               on_partial: Callable[[Any], None] | None = None,
               on_progress: Callable[[int, int, str], None] | None = None) -> Job:
        gen = next(self._counter)
        self._gen[key] = gen
        job = Job(self, key, gen, fn, label or key)
        job.signals.done.connect(self._finished)
        job.signals.progress.connect(self._progress)
        if on_partial is not None:
            job.signals.partial.connect(lambda j, part: None if self.is_stale(j) else on_partial(part))
        if on_progress is not None:
            job.signals.progress.connect(
                lambda _k, d, n, text: None if self.is_stale(job) else on_progress(d, n, text))
        self._live[id(job)] = (job, on_result, on_error)
        self.busy.emit(job.label, 0, 0)
        self.pool.start(job)
        return job

    def is_stale(self, job: Job) -> bool:
        """True when a newer job of the same key exists or the key was cancelled (thread-safe:
        reads one dict entry)."""
        return self._gen.get(job.key) != job.gen

    def cancel(self, key: str | None = None) -> None:
        """Make the running/queued jobs of `key` (all keys when None) stale."""
        for k in ([key] if key else list(self._gen)):
            self._gen[k] = next(self._counter)

    def pending(self) -> int:
        return len(self._live)

    def live_keys(self) -> list[str]:
        """Keys of the jobs queued or running (stale ones included)."""
        return [job.key for job, _, _ in self._live.values()]

    def wait(self, msecs: int = -1) -> bool:
        """Block until the pool is empty (for shutdown and tests only)."""
        return self.pool.waitForDone(msecs)

    def shutdown(self, msecs: int = 30000) -> bool:
        """Stop for good (the window is closing): make every job stale, drop the queued ones,
        wait up to msecs for the running one to return (jobs check cancelled() often), then
        disconnect every job's signals so nothing is delivered to a deleted receiver.
        Returns True when no job is left running."""
        self.cancel()
        self.pool.clear()  # queued jobs that never started
        done = self.pool.waitForDone(msecs)
        for job, _, _ in list(self._live.values()):
            for sig in (job.signals.done, job.signals.progress, job.signals.partial):
                with warnings.catch_warnings():  # PySide warns when nothing was connected
                    warnings.simplefilter("ignore", RuntimeWarning)
                    try:
                        sig.disconnect()
                    except (RuntimeError, TypeError):  # nothing connected / already deleted
                        pass
        if done:
            self._live.clear()
        return done

    def _progress(self, key: str, done: int, total: int, text: str) -> None:
        self.busy.emit(text or key, done, total)

    def _finished(self, job: Job, result: Any, error: BaseException | None) -> None:
        _, on_result, on_error = self._live.pop(id(job), (job, None, None))
        job.signals.deleteLater()
        job.dropped = self.is_stale(job) or isinstance(error, Cancelled)
        self.ended.emit(job)
        try:
            if job.dropped:
                self.dropped.emit(job.key)
            elif error is not None:
                if on_error:
                    on_error(error)
                else:
                    log.error("job %s failed: %s", job.label, error)
            elif on_result:
                on_result(result)
        finally:
            if not self._live:
                self.idle.emit()


def shutdown_all(runners: list[Runner], msecs: int) -> bool:
    """Runner.shutdown of every runner within one budget of msecs in all (the window is
    closing): every job is made stale and every queue dropped first, then each runner waits
    for what is left of the one deadline, not msecs each. True when no job is left running."""
    runners = list(runners)
    for r in runners:
        r.cancel()
        r.pool.clear()
    deadline = time.monotonic() + max(0, msecs) / 1000
    ok = True
    for r in runners:
        left = max(0, round((deadline - time.monotonic()) * 1000))
        ok = r.shutdown(left) and ok
    return ok


class PanelJobs(QObject):
    """The jobs one panel submits to a Runner it shares (the Session's): submit() as
    Runner.submit; busy / idle / dropped for this panel's jobs alone (its own progress bar and
    Cancel button), pending() and cancel() over its keys alone. The Runner's own signals still
    carry every job to the window's status bar and its Cancel. Keys are the runner's: a panel
    uses keys no other panel does. When the panel (its parent) is deleted, its jobs go stale."""

    busy = Signal(str, int, int)
    idle = Signal()
    dropped = Signal(str)

    def __init__(self, runner: Runner, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self._keys: set[str] = set()
        self._live: set[int] = set()
        runner.ended.connect(self._ended)
        if parent is not None:  # a deleted panel is handed nothing: its jobs go stale
            keys = self._keys
            parent.destroyed.connect(lambda *_: [runner.cancel(k) for k in sorted(keys)])

    def submit(self, key: str, fn: Callable[[JobContext], Any], on_result: Callable[[Any], None],
               on_error: Callable[[BaseException], None] | None = None, label: str = "") -> Job:
        self._keys.add(key)
        job = self.runner.submit(key, fn, on_result, on_error, label,
                                 on_progress=lambda d, n, text: self.busy.emit(text or key, d, n))
        self._live.add(id(job))
        self.busy.emit(job.label, 0, 0)
        return job

    def cancel(self, key: str | None = None) -> None:
        """Make this panel's running/queued jobs of `key` (all its keys when None) stale."""
        for k in [key] if key else sorted(self._keys):
            self.runner.cancel(k)

    def pending(self) -> int:
        return len(self._live)

    def wait(self, msecs: int = -1) -> bool:
        """Block until the shared pool is empty (tests only)."""
        return self.runner.wait(msecs)

    def _ended(self, job: Job) -> None:
        if id(job) not in self._live:
            return
        self._live.discard(id(job))
        if job.dropped:
            self.dropped.emit(job.key)
        if not self._live:
            self.idle.emit()
