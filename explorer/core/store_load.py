"""Store's file loading (the Loading mixin of explorer.core.store.Store): one file, an archive,
a folder, many files in batches (one transaction per file), the inputs table (provenance of
every file loaded, failed or ignored) and its read-back as load reports."""
from __future__ import annotations

import contextlib
import json
import re
import tempfile
import threading
from pathlib import Path
from typing import Iterable

import duckdb
import pandas as pd

from . import errlog, schema
from .errors import Cancelled, InputError
from .i18n import _, ngettext
from .inputfiles import (LOAD_CANCELLED, LoadReport, _Hasher, _looks_aggregate, sha256_of,
                         special_file, walk_inputs)
from .sqlutil import quote_ident

class Loading:
    """File loading for Store (uses its connection, lock, append and settings)."""

    # set by Store.__init__ (see there)
    _input_ids_to: int
    _input_id_of: dict[int, int]

    # -- loading ----------------------------------------------------------------------------
    def load_file(self, path: str | Path, format: str | None = None) -> LoadReport:
        """load_one for a file or folder; a .gz / .zst file is decoded first and a .zip
        loads its members (explorer.core.archive: read in place, named as the archive)."""
        from . import archive
        if not archive.kind(Path(path)):
            return self.load_one(path, format)
        reports = self._load_archive(Path(path), format)
        return reports[0] if len(reports) == 1 else self._archive_summary(Path(path), reports)

    def _load_archive(self, path: Path, format: str | None = None) -> list[LoadReport]:
        """The reports of an archive's content (archive.unpacked), its temporary paths shown
        as the archive's; a broken archive gives one failed report."""
        from . import archive
        try:
            with archive.unpacked(path) as (inner, shown, note):
                for tmp, orig in shown.items():
                    self._copy_of[tmp] = (orig, note)
                try:
                    if archive.kind(path) == "stream":
                        reports = [self.load_one(inner, format)]
                    else:
                        reports = self.load_paths([inner])
                finally:
                    for tmp in shown:
                        self._copy_of.pop(tmp, None)
        except InputError as e:
            report = LoadReport(path=str(path), error=str(e))
            self._record_input(report)
            return [report]
        for r in reports:
            for tmp, orig in sorted(shown.items(), key=lambda kv: -len(kv[0])):
                r.path = r.path.replace(tmp, orig)
                r.error = r.error and r.error.replace(tmp, orig)
                r.skipped_file = r.skipped_file and r.skipped_file.replace(tmp, orig)
            if not r.skipped_file:
                r.columns[_("(archive)")] = note
        return reports

    def _archive_summary(self, path: Path, reports: list[LoadReport]) -> LoadReport:
        """One report standing for a .zip's members (load_paths gives each its own)."""
        ok = [r for r in reports if not r.skipped_file and not r.error]
        out = LoadReport(path=str(path), format=", ".join(sorted({r.format for r in ok})) or None,
                         kind=ok[0].kind if ok else None,
                         run_ids=[x for r in ok for x in r.run_ids],
                         eval_ids=[x for r in ok for x in r.eval_ids],
                         rows_loaded=sum(r.rows_loaded for r in ok),
                         rows_skipped=sum(r.rows_skipped for r in ok),
                         skipped_reasons=[f"{r.path}: {x}" for r in ok for x in r.skipped_reasons][:20],
                         columns={r.path: r.format for r in ok})
        if not ok:
            out.error = f"{path}: " + _("no trace or eval file found in this archive")
        return out

    def load_one(self, path: str | Path, format: str | None = None) -> LoadReport:
        """Detect the format of one file or folder by content and load it in one transaction.

        Never raises for a bad file: the returned LoadReport carries `error` (naming the file,
        line and field where known) and nothing of that file stays in the store. The input file
        is only read. The report is also recorded in the `inputs` table.

        Content, not path, decides what is new: an input whose sha256 equals that of an input
        already loaded successfully into this store (the same file again, a copy under another
        name, a folder with the same digest) is not loaded; its report has skipped_file =
        "same content as <earlier path> (sha256 <12 hex>…), already loaded: not loaded again"
        (format, kind and error None, no rows) and the earlier data stays. A small input is
        hashed before anything is inserted; a big one (over _Hasher.THREAD_BYTES) is hashed
        in a thread while it loads and, when a duplicate, rolled back before COMMIT. An input
        that failed (error) may be loaded again.
        """
        from .formats import detect_format, get_format

        report = LoadReport(path=str(self.source_of(path)))
        recorded = False
        with self._lock:
            try:
                p = Path(path)
                if not p.exists():
                    raise InputError(p, _("no such file or folder"))
                why = special_file(p)
                if why:  # a FIFO would block the read forever: never opened
                    raise InputError(p, _("{why}: not opened").format(why=why))
                if p.is_file() and p.stat().st_size == 0:
                    raise InputError(p, _("the file is empty"))
                fmt = get_format(format) if format else detect_format(p)
                report.format, report.kind = fmt.NAME, fmt.KIND
                # what the format reads (a HELM file: its run folder), in a thread for big
                # inputs (hashlib releases the GIL)
                hasher = _Hasher(Path(getattr(fmt, "input_root", lambda q: q)(p)))
                report.sha256 = hasher.early()
                earlier = self._loaded_as(report.sha256)  # known before any insert
                if earlier is None:
                    with self._utf8(p, report) as readable:
                        earlier = self._load_in_transaction(fmt, readable, report, hasher)
                    recorded = earlier is None
                if earlier is not None:
                    self._mark_duplicate(report, earlier)
            except Cancelled:
                report.error = f"{path}: {LOAD_CANCELLED}"
            except duckdb.InterruptException:  # Ctrl-C / SIGTERM inside a query: the whole
                raise KeyboardInterrupt from None  # load stops ("interrupted"), rolled back
            except InputError as e:
                report.error = str(e)
            except (UnicodeDecodeError, ValueError, KeyError, TypeError, duckdb.Error) as e:
                report.error = f"{path}: cannot be read as {report.format or 'a known format'}: {e}"
            except OSError as e:
                report.error = f"{path}: cannot be read ({e.strerror or errlog.describe(e)})"
            except Exception as e:  # noqa: BLE001 - any other fault (OverflowError,
                # RecursionError, MemoryError, a loader's bug) fails this file alone
                report.error = (f"{path}: cannot be read as {report.format or 'a known format'}: "
                                f"{errlog.describe(e)} ({errlog.record(e, f'loading {path}')})")
            if report.error:
                report.run_ids, report.eval_ids, report.rows_loaded = [], [], 0
                report.error = report.error.replace(str(path), report.path)
            if not recorded:
                self._record_input(report)
        return report

    @contextlib.contextmanager
    def _utf8(self, p: Path, report: LoadReport):
        """Yield the path to read: `p`, or a UTF-8 copy of it in a temporary folder when it is
        UTF-16 or single-byte text (formats._encoding); the copy stands for `p` (source_of,
        and in error messages) while it loads and is deleted after; the report's columns say
        which encoding. Files a format reads beside its input are not in that folder."""
        from .formats._encoding import NAMES, head_encoding, utf8_copy
        from .formats._preamble import TABLE_SUFFIXES, normalised_copy, preamble_of
        enc = head_encoding(p)
        pre = (self._preamble(p, enc, preamble_of) if p.suffix.lower() in TABLE_SUFFIXES
               else preamble_of("", ""))
        if enc is None and not pre.needed:
            yield p
            return
        with tempfile.TemporaryDirectory(prefix="trace-explorer-utf8-") as tmp:
            if pre.needed:  # sep= line, # comments, mixed line ends: a normalised copy
                copy = normalised_copy(p, enc, pre, Path(tmp))
                report._line_offset = pre.lines
                what = _preamble_text(pre)
                if enc:
                    what = _("{encoding}, read as UTF-8").format(encoding=NAMES[enc]) + "; " + what
            else:
                copy = utf8_copy(p, enc, Path(tmp))
                what = _("{encoding}, read as UTF-8").format(encoding=NAMES[enc])
            self._copy_of[str(copy)] = (str(p), what)
            try:
                yield copy
            except InputError as e:
                line = e.line + pre.lines if e.line is not None else None
                raise InputError(p, e.message.replace(str(copy), str(p)), line,
                                 e.field) from None
            except duckdb.Error as e:
                raise InputError(p, _("cannot be read as {format}: {error}").format(
                    format=report.format, error=str(e).replace(str(copy), str(p)))) from None
            finally:
                self._copy_of.pop(str(copy), None)

    @staticmethod
    def _preamble(p: Path, enc: str | None, preamble_of):
        """The preamble (formats._preamble) of a table file's head, decoded in `enc`."""
        if p.is_dir():
            return preamble_of("", "")
        with open(p, "rb") as fh:
            head = fh.read(64 * 1024)
        return preamble_of(head.decode(enc or "utf-8-sig", errors="replace"), p.suffix)

    def _from_copy(self, p: Path, report: LoadReport) -> None:
        """After a UTF-8 copy loaded: its reasons name the original, its columns the encoding."""
        found = self._copy_of.get(str(p))
        if found:
            report.skipped_reasons = [r.replace(str(p), found[0]) for r in report.skipped_reasons]
            report.columns[_("(file encoding)")] = found[1]

    def _load_in_transaction(self, fmt, p: Path, report: LoadReport,
                             hasher: "_Hasher") -> str | None:
        """fmt.load(p) and the `inputs` row in one transaction, committed; or, when the hash
        (computed meanwhile in a thread for a big input) turns out to be that of an input
        already loaded, rolled back, returning that input's path (None when committed).
        Exceptions roll back and propagate."""
        from .formats.base import cancel_check
        self.con.execute("BEGIN TRANSACTION")
        done = False
        self._report = report
        token = cancel_check.set(self.check_cancelled)  # long reads stop on Cancel too
        try:
            with self._interrupt_on_cancel():  # a Cancel stops DuckDB's scan of a big file
                fmt.load(p, self, report)
            self._from_copy(p, report)
            earlier = None
            if report.sha256 is None:
                report.sha256 = hasher.result()
                earlier = self._loaded_as(report.sha256)
                if earlier is None:
                    self._set_source_sha256(report)
            if earlier is not None:
                done = True
                self.con.execute("ROLLBACK")  # a duplicate: nothing of it stays
                return earlier
            self.check_cancelled()  # the last moment a Cancel can still undo this file
            self._record_input(report)  # same transaction: one commit per file
            self.con.execute("COMMIT")
            done = True
            return None
        except BaseException:
            if not done:
                self.con.execute("ROLLBACK")
            raise
        finally:
            cancel_check.reset(token)
            self._report = None
            hasher.result()

    #: seconds between two looks at cancelled() while DuckDB reads a file
    CANCEL_POLL_S = 0.1

    @contextlib.contextmanager
    def _interrupt_on_cancel(self):
        """While the body runs (one format's load of one file), a thread polls the load's
        cancelled() and, once it is True, interrupts the connection's query (DuckDB stops a
        scan within a fraction of a second; without it a Cancel waited for the whole file: 11 s
        of a 3M-row CSV). The interrupt never reaches a query after the body (the rollback):
        it is fired under a lock the body's end takes; whatever the body then raised, or did
        not, it ends as Cancelled (the caller rolls the file back)."""
        lock, stop, fired = threading.Lock(), threading.Event(), []

        def watch():
            while not stop.wait(self.CANCEL_POLL_S):
                if self._cancelled():
                    with lock:
                        if not stop.is_set():
                            fired.append(True)
                            self.con.interrupt()
                    return
        t = threading.Thread(target=watch, daemon=True, name="te-load-cancel")
        t.start()
        try:
            yield
        except KeyboardInterrupt:  # Ctrl-C / SIGTERM: "interrupted", as before
            raise
        except BaseException:  # the interrupt, as the loader reported it (InputError, ...)
            if fired:
                raise Cancelled(LOAD_CANCELLED) from None
            raise
        finally:
            with lock:
                stop.set()
            t.join()
        if fired:
            raise Cancelled(LOAD_CANCELLED)

    def _loaded_as(self, sha256: str | None) -> str | None:
        """Path of the first input with this sha256 that loaded successfully into this store
        (not failed, not ignored); None when there is none."""
        if sha256 is None:
            return None
        rows = self.con.execute(
            "SELECT path FROM inputs WHERE sha256 = ? AND error IS NULL AND kind IS DISTINCT"
            " FROM 'ignored' ORDER BY input_id LIMIT 1", [sha256]).fetchall()
        return rows[0][0] if rows else None

    @staticmethod
    def _mark_duplicate(report: LoadReport, earlier: str) -> None:
        """Turn `report` into that of an ignored input (nothing loaded) whose content equals
        the input loaded earlier from `earlier`; the sha256 stays."""
        report.format = report.kind = report.error = None
        report.run_ids, report.eval_ids, report.columns = [], [], {}
        report.rows_loaded = report.rows_skipped = 0
        report.skipped_reasons = []
        report.skipped_file = _("same content as {earlier} (sha256 {sha}…), already loaded: not "
                                "loaded again").format(earlier=earlier, sha=report.sha256[:12])

    def load_paths(self, paths: Iterable[str | Path], progress=None,
                   cancelled=lambda: False) -> list[LoadReport]:
        """Load files and folders; one LoadReport per file, in order. Never raises for a bad
        input: each fails alone (its report has `error`) and the others load.

        A folder that a format claims as a whole (a HELM run) loads as one input; any other
        folder loads every file in it that some format recognises (walk_inputs: symbolic links
        are followed only inside the folder, each real path once; FIFOs, sockets and devices
        are listed and never opened; an unreadable sub-folder fails alone). A file found in a
        folder that is not a trace or eval (unrecognised, binary, empty, or a table only the
        generic fallback claims and in which no column maps to a request metric) is not
        loaded: its report has skipped_file = the reason (format and error None) and it is
        recorded in the `inputs` table with kind 'ignored'. A file named explicitly is always
        loaded (and fails with a clear error when unusable), unless its content was already
        loaded (load_file: then ignored as a duplicate). progress(i, n, path) is called before
        each file; cancelled() is checked between files and while a file loads (Store.append):
        the file being read is then rolled back, its report says so, and loading stops.

        Many small tables are read in batches (_batches), loaded when the batch's first file
        is reached; each file's `inputs` row still has the input_id of its place in the walk
        (reserved here), so the recorded order is that of loading each file on its own."""
        todo = walk_inputs(paths)
        with self._lock:
            first_id = max(self.scalar("SELECT coalesce(max(input_id), 0) FROM inputs"),
                           self._input_ids_to) + 1
            self._input_ids_to = first_id + len(todo) - 1
        self._cancelled = cancelled
        thread = threading.get_ident()
        unpacked = 0  # rows loaded since compact() was last asked
        try:
            found = self._classify(todo, cancelled)
            batch_of = self._batches(todo, found)
            out: dict[int, LoadReport] = {}
            for i, (p, explicit, note) in enumerate(todo):
                if i in out:
                    continue  # loaded with its batch
                if cancelled():
                    break
                if progress:
                    progress(i, len(todo), str(p))
                group = batch_of.get(i)
                got = self._load_batch([todo[j][0] for j in group],
                                       [first_id + j for j in group]) if group else None
                if got is not None:
                    out.update(zip(group, got))
                else:
                    self._input_id_of[thread] = first_id + i
                    out[i] = self._load_one(p, explicit, note, found.get(i))
                last = out[group[-1] if got is not None else i]  # a cancelled batch: all say so
                if last.error and last.error.endswith(LOAD_CANCELLED):
                    break
                unpacked += sum(out[j].rows_loaded for j in (group if got is not None else [i]))
                if unpacked >= self.COMPACT_CHECK_ROWS:  # a check costs a query (1.5 ms)
                    unpacked = 0
                    self.compact()  # a big file compressed before the next one adds to it
        finally:
            self._cancelled = lambda: False
            self._input_id_of.pop(thread, None)
        return [out[i] for i in sorted(out)]

    # Many small files of one format and header (a folder of 5,000 request tables) are read
    # together: batches of BATCH_MIN_FILES to BATCH_MAX_FILES files of at most BATCH_MAX_BYTES.
    BATCH_MIN_FILES = 2
    BATCH_MAX_FILES = 500
    BATCH_MAX_BYTES = 1 << 20

    def _classify(self, todo, cancelled) -> dict[int, tuple]:
        """For each file of todo found in a folder: _why_ignored's (why, format) or, when
        detection itself failed, the failed report; a generic table's gets a third item None
        and a fourth, its _batch_key. Stops early when cancelled."""
        found: dict[int, tuple] = {}
        for i, (p, explicit, note) in enumerate(todo):
            if cancelled():
                break
            if note is None and not explicit:
                sniffed: list = []
                try:
                    found[i] = self._why_ignored(p, sniffed)
                    if found[i] == (None, "generic_table") and sniffed:
                        # only the key is kept: a sniff (head, parsed lines) per file would
                        # stay in memory for the whole load
                        found[i] += (None, self._batch_key(p, sniffed[0]))
                except Exception as e:  # noqa: BLE001 - detection must not stop the others
                    found[i] = (None, None, LoadReport(path=str(p), error=(
                        f"{p}: cannot be read: {errlog.describe(e)} "
                        f"({errlog.record(e, f'detecting the format of {p}')})")))
        return found

    def _batch_key(self, p: Path, sniff) -> tuple | None:
        """generic_table.batch_key of a file the generic table format reads, or None when it
        is read on its own: over BATCH_MAX_BYTES, not UTF-8, or unreadable."""
        from .formats import generic_table
        from .formats._encoding import encoding_of, mixed_line
        from .formats._preamble import TABLE_SUFFIXES, preamble_of
        try:
            if p.stat().st_size > self.BATCH_MAX_BYTES:
                return None
            with open(p, "rb") as fh:
                raw = fh.read(64 * 1024)
        except OSError:
            return None
        if encoding_of(raw) is not None or mixed_line(raw):
            return None  # read alone, from a UTF-8 copy (or refused naming the line)
        if p.suffix.lower() in TABLE_SUFFIXES and preamble_of(
                raw.decode("utf-8-sig", errors="replace"), p.suffix).needed:
            return None  # sep= line, # comments, mixed line ends: from a normalised copy
        return generic_table.batch_key(sniff)

    def _batches(self, todo, found: dict[int, tuple]) -> dict[int, list[int]]:
        """first index of a batch -> the indices of its files: files found in folders that
        share a _batch_key (_classify). A batch registers its runs when its first file is
        reached, so a file whose run base (generic_table.run_base) another table of the walk
        outside its batch shares is read alone: the run ids (base, base#2, ...) then follow
        the walk, as without batches."""
        from .formats import generic_table
        groups: dict[tuple, list[int]] = {}
        for i, got in found.items():
            if len(got) == 4 and got[3] is not None:  # a generic table that may be batched
                groups.setdefault(got[3], []).append(i)
        chunks = [members[k:k + self.BATCH_MAX_FILES] for members in groups.values()
                  for k in range(0, len(members), self.BATCH_MAX_FILES)]
        owner = {i: n for n, chunk in enumerate(chunks) for i in chunk}
        owners: dict[str, set] = {}  # run base -> the batches (or ("alone", i)) its files are in
        for i, (p, explicit, note) in enumerate(todo):
            if note is None and (explicit or len(found.get(i, ())) == 4):  # may be a table
                owners.setdefault(generic_table.run_base(p), set()).add(
                    owner.get(i, ("alone", i)))
        out: dict[int, list[int]] = {}
        for chunk in chunks:
            chunk = [i for i in chunk if len(owners[generic_table.run_base(todo[i][0])]) == 1]
            if len(chunk) >= self.BATCH_MIN_FILES:
                out[chunk[0]] = chunk
        return out

    def _load_batch(self, paths: list[Path], input_ids: list[int]) -> list[LoadReport] | None:
        """Load a batch of small generic tables (generic_table.load_batch) and their `inputs`
        rows (with input_ids) in one transaction; a file whose content was loaded before (or earlier in the
        batch) is a duplicate, as in load_file. Returns the reports, in order; None, with
        nothing kept, when the files cannot be read as one (then each is loaded on its own,
        failing alone). A Cancel rolls the batch back: each of its files says so."""
        from .formats import generic_table
        with self._lock:
            try:
                reports = [LoadReport(path=str(p), format=generic_table.NAME,
                                      kind=generic_table.KIND, sha256=sha256_of(p)) for p in paths]
            except OSError:
                return None
            earlier = dict(self.con.execute(
                "SELECT sha256, arg_min(path, input_id) FROM inputs WHERE list_contains(?, sha256)"
                " AND error IS NULL AND kind IS DISTINCT FROM 'ignored' GROUP BY sha256",
                [[r.sha256 for r in reports]]).fetchall())
            new = []
            for r in reports:
                if r.sha256 in earlier:
                    self._mark_duplicate(r, earlier[r.sha256])
                else:
                    earlier[r.sha256] = r.path
                    new.append(r)
            from .formats.base import cancel_check
            self.con.execute("BEGIN TRANSACTION")
            token = cancel_check.set(self.check_cancelled)
            try:
                if new and not generic_table.load_batch([Path(r.path) for r in new], self, new):
                    self.con.execute("ROLLBACK")
                    return None
                self.check_cancelled()
                self._record_inputs(reports, input_ids)
                self.con.execute("COMMIT")
                return reports
            except Cancelled:
                self.con.execute("ROLLBACK")
                reports = [LoadReport(path=str(p), error=f"{p}: {LOAD_CANCELLED}")
                           for p in paths]
                self._record_inputs(reports, input_ids)
                return reports
            except Exception:  # noqa: BLE001 - each file on its own says what went wrong
                self.con.execute("ROLLBACK")
                return None
            finally:
                cancel_check.reset(token)

    def _load_one(self, p: Path, explicit: bool, note: tuple[str, str] | None,
                  found: tuple | None = None) -> LoadReport:
        """One entry of walk_inputs: a failed / ignored report for a note, else load_file.
        found: _classify's result for a file in a folder ((why, format), or a failed report)."""
        if note is not None:
            kind, why = note
            report = LoadReport(path=str(self.source_of(p)), **({"error": f"{p}: {why}"} if kind == "error"
                                                 else {"skipped_file": why}))
        elif found is not None and len(found) == 3:
            report = found[2]  # detection itself failed
        else:
            why, fmt = (None, None) if explicit else found[:2]
            if not why:
                return self.load_file(p, fmt)  # detected once
            report = LoadReport(path=str(self.source_of(p)), skipped_file=why)
        with self._lock:
            self._record_input(report)
        return report

    def check_cancelled(self) -> None:
        """Raise errors.Cancelled when the load in progress was cancelled (load_paths'
        cancelled()); loaders reach it through append, load_file before COMMIT."""
        if self._cancelled():
            raise Cancelled(LOAD_CANCELLED)

    @staticmethod
    def _why_ignored(p: Path, sniffed: list | None = None) -> tuple[str | None, str | None]:
        """(why a file found in a folder is passed over, None) or (None, the detected format).
        sniffed: a list that receives the Sniff the detection read (for _batch_key)."""
        from .formats import MIN_CONFIDENCE, rank_formats
        from .formats._sweep import pass_over
        from .formats.base import Sniff
        from .formats.published import pass_over as published_pass_over
        from .formats._aiperf_side import pass_over as aiperf_pass_over
        try:
            if p.stat().st_size == 0:
                return _("empty file"), None
            from . import archive
            if archive.kind(p):
                return None, None  # load_file decodes it, then detects what is inside
            sweep = pass_over(p) or published_pass_over(p) or aiperf_pass_over(p)  # loaded anyway
            if sweep:
                return sweep, None
            sniff = Sniff.of(p)
            if sniffed is not None:
                sniffed.append(sniff)
            ranked = rank_formats(p, sniff)
        except OSError:
            return None, None  # load_file fails it with the reason (an error, not ignored)
        if not ranked or ranked[0][0] < MIN_CONFIDENCE:
            if sniff.is_binary:
                from .formats._encoding import compressed_kind
                return compressed_kind(p) or _("binary content"), None
            head = sniff.head.strip()
            if head in ("[]", "{}", ""):
                return _("no records (the file holds only {what})").format(
                    what=head or _("blank lines")), None
            if p.suffix.lower() in (".md", ".markdown", ".rst", ".html", ".htm", ".pdf"):
                return _("a document, not a trace or eval file"), None
            if _looks_aggregate(re.findall(r"[A-Za-z_][\w ]*", head[:8192])):
                return _("an aggregate summary (statistics such as avg / p50 / p99 or "
                         "benchmark scores), not per-request records"), None
            from .formats import json_syntax_error
            if json_syntax_error(p, sniff) is not None:
                return None, None  # broken JSON: load_file fails it with its line (an error)
            return _("not a trace or eval file (no known format matches its content)"), None
        if ranked[0][1] == "generic_table" and ranked[0][0] < 0.4:  # the fallback only
            from .formats import generic_table
            cols = generic_table._header(sniff, generic_table._kind(sniff) or "csv")
            shown = ", ".join(cols[:8]) + (", ..." if len(cols) > 8 else "")
            if _looks_aggregate(cols):
                return _("an aggregate summary table (columns {shown}), not per-request "
                         "records").format(shown=shown), None
            return _("not a request table: no column maps to a request metric "
                     "(columns {shown})").format(shown=shown), None
        return None, ranked[0][1]

    def _set_source_sha256(self, r: LoadReport) -> None:
        """Fill runs / evals.source_sha256 of a file's rows once its hash is known (the
        format registered them while the hash was still being computed)."""
        for table, key, ids in (("runs", "run_id", r.run_ids), ("evals", "eval_id", r.eval_ids)):
            if ids:
                self.con.execute(f"UPDATE {table} SET source_sha256 = ? WHERE source_sha256 IS "
                                 f"NULL AND list_contains(?, {key})", [r.sha256, list(ids)])

    def _record_input(self, r: LoadReport) -> None:
        """One `inputs` row per report; an ignored file has kind 'ignored' and its reason as
        the only skipped reason (input_reports() turns it back into skipped_file). Its
        input_id: the one load_paths reserved for the file, else the next free one."""
        row = _input_row(r)
        self.con.execute(
            f"INSERT INTO inputs (input_id, {', '.join(map(quote_ident, row))}, loaded_at) "
            f"SELECT coalesce(?, greatest(coalesce(max(input_id), 0), ?) + 1), "
            f"{', '.join('?' * len(row))}, now() FROM inputs",
            [self._input_id_of.get(threading.get_ident()), self._input_ids_to,
             *row.values()])

    def _record_inputs(self, reports: list[LoadReport], input_ids: list[int]) -> None:
        """_record_input for many reports with the input_ids load_paths reserved, one INSERT."""
        frame = pd.DataFrame([_input_row(r) for r in reports], dtype=object)
        frame.insert(0, "input_id", input_ids)
        types = schema.column_types("inputs")  # a column of only None has no type of its own
        name = f"_inputs_{threading.get_ident()}"
        self.con.register(name, frame)
        try:
            self.con.execute(
                f"INSERT INTO inputs ({', '.join(map(quote_ident, frame.columns))}, loaded_at) "
                "SELECT " + ", ".join(f"CAST({quote_ident(c)} AS {types[c]})"
                                      for c in frame.columns) + f", now() FROM {quote_ident(name)}")
        finally:
            self.con.unregister(name)

    def input_reports(self) -> list[LoadReport]:
        """Every LoadReport recorded in this store, in load order."""
        rows = self.con.execute("SELECT path, format, kind, sha256, run_ids, eval_ids, rows_loaded,"
                                " rows_skipped, skipped_reasons, columns, error FROM inputs"
                                " ORDER BY input_id").fetchall()
        out = []
        for r in rows:
            reasons = json.loads(r[8] or "[]")
            if r[2] == "ignored":
                out.append(LoadReport(path=r[0], sha256=r[3],
                                      skipped_file=reasons[0] if reasons else "ignored"))
                continue
            out.append(LoadReport(path=r[0], format=r[1], kind=r[2], sha256=r[3],
                                  run_ids=json.loads(r[4] or "[]"),
                                  eval_ids=json.loads(r[5] or "[]"),
                                  rows_loaded=r[6] or 0, rows_skipped=r[7] or 0,
                                  skipped_reasons=reasons, columns=json.loads(r[9] or "{}"),
                                  error=r[10]))
        return out


def _preamble_text(pre) -> str:
    """What the normalised copy of a table changed, for the load report's columns."""
    parts = []
    if pre.sep:
        parts.append(_("Excel's sep={sep} line: {sep} as the delimiter").format(sep=pre.sep))
    comments = pre.lines - (1 if pre.sep else 0)
    if comments:
        parts.append(ngettext("{n} leading comment line skipped",
                              "{n} leading comment lines skipped", comments).format(n=comments))
    if pre.mixed_endings:
        parts.append(_("mixed line endings read as one"))
    return ", ".join(parts)


def _input_row(r: LoadReport) -> dict:
    """The `inputs` row of a report, by column (input_id and loaded_at apart): an ignored
    file has kind 'ignored' and its reason as the only skipped reason."""
    ignored = r.skipped_file is not None
    return {"path": r.path, "sha256": r.sha256, "format": r.format,
            "kind": "ignored" if ignored else r.kind, "rows_loaded": r.rows_loaded,
            "rows_skipped": r.rows_skipped,
            "skipped_reasons": json.dumps([r.skipped_file] if ignored else r.skipped_reasons),
            "columns": json.dumps(r.columns), "run_ids": json.dumps(r.run_ids),
            "eval_ids": json.dumps(r.eval_ids), "error": r.error}
