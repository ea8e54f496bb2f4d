"""Files in place across sessions (explorer.core.inplace): a reopened session's in-place files
checked (size, modification time, SHA-256) and re-attached or detached with a message naming
them; detached_files() lists those left out, relocate() points one at its new path; clear() for the
warehouse mode."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import InputError
from .i18n import _
from .inplace import LOCAL, _VIEW, _is_table, _make_view, requests_table, union
from .inputfiles import sha256_of
from .sqlutil import quote_ident


def changed(row_path: str, size: int, mtime_ns: int, sha256: str | None) -> str | None:
    """Why the file recorded with this path, size, time and SHA-256 cannot be attached as it
    was (None: it can). The time alone differing (a copy, a touch) is checked by SHA-256."""
    p = Path(row_path)
    if not p.is_file():
        return _("not found (moved or deleted)")
    st = p.stat()
    if st.st_size != size:
        return _("changed: {now:,} bytes, {then:,} when it was loaded").format(now=st.st_size, then=size)
    if st.st_mtime_ns != mtime_ns:
        if sha256 is None or sha256_of(p) != sha256:
            return _("changed since it was loaded (modified, and its SHA-256 differs)")
    return None


def reattach(store) -> list[str]:
    """After a session is reopened: check every in-place file (changed) and make the views of
    those unchanged; the others are detached (status says why). Returns a message per detached
    file, naming it."""
    con = store.con
    rows = con.execute(
        "SELECT f.view_no, f.path, f.size_bytes, f.mtime_ns, f.select_sql, f.rows, r.source_sha256 "
        "FROM in_place_files f LEFT JOIN runs r USING (run_id) "
        "WHERE f.status IS DISTINCT FROM ? ORDER BY f.view_no", [EMBEDDED]).fetchall()
    out = []
    for n, path, size, mtime, template, nrows, sha in rows:
        why = changed(path, size, mtime, sha)
        if why is None:
            _make_view(con, n, path, template)
            mtime = Path(path).stat().st_mtime_ns  # same content (checked): the new time
        else:
            out.append(detached_message(path, why, nrows))
        con.execute("UPDATE in_place_files SET status = ?, mtime_ns = ? WHERE view_no = ?",
                    [why, mtime, n])
    union(con)
    return out


def detached_message(path: str, why: str, rows: int | None) -> str:
    return _("{path}: {why}; its {rows:,} requests (read in place, not copied into the "
             "session) are left out until the file is found again").format(
                 path=path, why=why, rows=rows or 0)


def relocate(store, old: str, new: str | Path) -> None:
    """Point the in-place file recorded at `old` to the file at `new` when its SHA-256 is the
    one loaded (else InputError naming both): its view is made again over `new`."""
    con = store.con
    rows = con.execute("SELECT f.view_no, f.select_sql, r.source_sha256 FROM in_place_files f "
                       "LEFT JOIN runs r USING (run_id) WHERE f.path = ? "
                       "AND f.status IS DISTINCT FROM ?",  # embedded rows: in the session already
                       [str(old), EMBEDDED]).fetchall()
    if not rows:
        raise InputError(old, _("no file read in place was loaded from there"))
    p = Path(os.path.abspath(new))
    if not p.is_file():
        raise InputError(new, _("no such file"))
    got = sha256_of(p)
    for n, template, sha in rows:
        if sha is not None and got != sha:
            raise InputError(new, _("not the file loaded from {old} (its SHA-256 differs): "
                                    "load it as a new input instead").format(old=old))
        st = p.stat()
        with store._lock:
            _make_view(con, n, str(p), template)
            con.execute("UPDATE in_place_files SET path = ?, size_bytes = ?, mtime_ns = ?, "
                        "status = NULL WHERE view_no = ?", [str(p), st.st_size, st.st_mtime_ns, n])
            union(con)
    store.detached = [m for m in getattr(store, "detached", []) if not m.startswith(f"{old}: ")]


EMBEDDED = "embedded"  # in_place_files.status of a file whose rows a saved session holds


def embed(con, db: str) -> None:
    """In the session database `db` being saved (a copy of this one): every attached in-place
    file's rows appended to its copied rows (requests_local) and the file marked EMBEDDED, so
    reopening reads them from the session, not from the file (Store.save_as with_data)."""
    rows = con.execute("SELECT view_no FROM in_place_files WHERE status IS NULL "
                       "ORDER BY view_no").fetchall()
    target = f"{quote_ident(db)}.main.{quote_ident(LOCAL)}"
    for (n,) in rows:
        con.execute(f"INSERT INTO {target} BY NAME SELECT * FROM {quote_ident(_VIEW.format(n))}")
    if rows:
        con.execute(f"UPDATE {quote_ident(db)}.main.in_place_files SET status = ? "
                    "WHERE status IS NULL", [EMBEDDED])


def detached_files(store) -> list[str]:
    """Paths of the in-place files a reopened session could not attach (moved, deleted or
    changed; reattach), in load order: what File > Locate moved files offers."""
    try:
        rows = store.con.execute("SELECT path FROM in_place_files WHERE status IS NOT NULL "
                                 "AND status NOT IN ('cleared', ?) ORDER BY view_no",
                                 [EMBEDDED]).fetchall()
    except Exception:  # noqa: BLE001 - a store without the table (a warehouse) detached none
        return []
    return [p for (p,) in rows]


def clear(store) -> None:
    """No request rows any more (the warehouse mode replaces them): the copied ones deleted,
    every in-place file's view dropped."""
    con = store.con
    for (n,) in con.execute("SELECT view_no FROM in_place_files").fetchall():
        con.execute(f"DROP VIEW IF EXISTS {quote_ident(_VIEW.format(n))}")
    con.execute("UPDATE in_place_files SET status = 'cleared'")
    con.execute(f"DELETE FROM {requests_table(con)}")
    if _is_table(con, LOCAL):
        union(con)
