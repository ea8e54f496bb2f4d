"""Files in place (../shared/DESIGN.md "Files in place", docs/files-in-place.md, issue 37): a
large Parquet or CSV request file is not copied into the store; the generic table loader makes it
a DuckDB view over the file (read_parquet / read_csv with the column mapping in SQL, the rows the
checks skip filtered out), and `requests` becomes the view
`requests_local UNION ALL requests_src_1 UNION ALL ...` (requests_local: the rows copied in from
every other input). The analyses read `requests` and are unchanged.

The store's `in_place_files` table keeps each such file's path, size, modification time and the
view's SQL; a reopened session (Store.open -> reattach) checks each file: the same size and time
(or, the time alone changed, the same SHA-256 as when loaded) re-attaches it, otherwise the file
is detached: its runs, cases and links stay, its requests are absent, and Store.detached holds a
message naming it; relocate() points it at the file's new path once the SHA-256 matches (those
three, which hash files, are in inplace_session, the store's layer).

Mode (`--in-place`, TE_IN_PLACE): auto (default: a Parquet file of at least IN_PLACE_ROWS rows,
a CSV of at least IN_PLACE_CSV_BYTES), always (every Parquet / CSV request table), never.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from . import schema
from .i18n import _
from .sqlutil import quote_ident

MODES = ("auto", "always", "never")
ENV_MODE = "TE_IN_PLACE"
IN_PLACE_ROWS = 1_000_000  # Parquet rows (read from the footer) from which auto keeps a file in place
IN_PLACE_CSV_BYTES = 128 << 20  # ~1M rows of a 12-column request CSV (the bench file: 146 B a row)
LOCAL = "requests_local"  # the copied rows once some file is in place
PATH = "$te_path"  # in a stored view SQL: where the file's path goes
_VIEW = "requests_src_{}"
_TIMELINE_INDEX = "timeline_requests_rid"  # an index blocks the rename (queries/timeline_indexes.sql)
_override: str | None = None


def set_mode(text: str | None) -> None:
    """This process's mode for the loads from now on (--in-place). Raises ValueError."""
    global _override
    if text is not None and text not in MODES:
        raise ValueError(_("--in-place {x}: expected one of {modes}").format(
            x=text, modes=", ".join(MODES)))
    _override = text


def wanted_mode() -> str:
    """--in-place, else TE_IN_PLACE (when one of MODES), else auto."""
    env = os.environ.get(ENV_MODE, "").strip().lower()
    return _override or (env if env in MODES else "auto")


def wanted(store, path: Path, kind: str) -> bool:
    """Whether the generic loader keeps this request table in place: a Parquet or CSV file the
    store reads as it is (not a temporary UTF-8 / normalised copy or an archive's member), as
    the mode says."""
    mode = wanted_mode()
    if mode == "never" or kind not in ("parquet", "csv") or not Path(path).is_file():
        return False
    if Path(store.source_of(path)) != Path(path) or _in_temp_archive(store, path):
        return False
    if mode == "always":
        return True
    if kind == "parquet":
        import pyarrow.parquet as pq
        return pq.ParquetFile(path).metadata.num_rows >= IN_PLACE_ROWS
    return Path(path).stat().st_size >= IN_PLACE_CSV_BYTES


def _in_temp_archive(store, path: Path) -> bool:
    """True for a file inside an archive being unpacked (gone once the load ends)."""
    p = str(path)
    return any(p.startswith(tmp.rstrip("/") + "/") for tmp in getattr(store, "_copy_of", {}))


def sql_lit(s: str) -> str:
    return "'" + str(s).replace("'", "''") + "'"


def inline(sql: str, params: dict) -> str:
    """`sql` with the loader's parameters written into it (a view takes none): $path becomes
    PATH (the file's path, substituted when the view is made), $types a struct literal."""
    def sub(m: re.Match) -> str:
        if m.group(1) == "path":
            return PATH
        return "{" + ", ".join(f"{sql_lit(k)}: {sql_lit(v)}"
                               for k, v in params["types"].items()) + "}"
    return re.sub(r"\$(path|types)\b", sub, sql)


def typed_sql(run_sql: str, exprs: dict[str, str], src: str, where: str) -> str:
    """SELECT of every canonical request column with its store type (what the copy's INSERT BY
    NAME casts to) from `src`; run_sql: the run id's SQL (a literal, or $run_id)."""
    types = schema.column_types("requests")
    have = {"run_id", *exprs}
    select = ", ".join(f"{e} AS {quote_ident(c)}" for c, e in exprs.items())
    cols = ", ".join(f"CAST({quote_ident(c) if c in have else 'NULL'} AS {t}) AS {quote_ident(c)}"
                     for c, t in types.items())
    return f"SELECT {cols} FROM (SELECT {run_sql} AS run_id, {select} FROM {src}{where})"


def view_sql(run_id: str, exprs: dict[str, str], src: str, where: str,
             canon_bad: str | None) -> str:
    """The SQL of a file's view: typed_sql, the rows failing a check left out as the copy
    leaves them out (`where` on the source, then `canon_bad` on the stored values)."""
    typed = typed_sql(sql_lit(run_id), exprs, src, where)
    return f"SELECT * FROM ({typed}) WHERE NOT ({canon_bad})" if canon_bad else typed


def requests_table(con) -> str:
    """The table that takes copied request rows: requests, or requests_local once a file is
    in place (Store.append, the loaders' INSERTs)."""
    return LOCAL if _is_table(con, LOCAL) else "requests"


def _is_table(con, name: str) -> bool:
    return bool(con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND table_name = ?", [name]).fetchall()[0][0])


def attach(store, run_id: str, path: Path, template: str, rows: int) -> str:
    """Make the view of an in-place file (inside the load's transaction) and record it in
    in_place_files; returns the view's name. `template`: view_sql over a source naming PATH."""
    con = store.con
    n = con.execute("SELECT coalesce(max(view_no), 0) + 1 FROM in_place_files").fetchall()[0][0]
    path = os.path.abspath(path)  # the view reads it from any working folder
    st = Path(path).stat()
    con.execute("INSERT INTO in_place_files VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                [n, run_id, path, st.st_size, st.st_mtime_ns, template, rows])
    _make_view(con, n, path, template)
    union(con)
    return _VIEW.format(n)


def _make_view(con, n: int, path: str, template: str) -> None:
    con.execute(f"CREATE OR REPLACE VIEW {quote_ident(_VIEW.format(n))} AS "
                + template.replace(PATH, sql_lit(path)))


def union(con) -> None:
    """(Re)define `requests` as the copied rows and every attached file's view. The first time,
    the table `requests` is renamed requests_local (its timeline index dropped: an index blocks
    ALTER TABLE; the timeline's lookups then scan)."""
    attached = [r[0] for r in con.execute(
        "SELECT view_no FROM in_place_files WHERE status IS NULL ORDER BY view_no").fetchall()]
    if _is_table(con, "requests"):
        if not attached:
            return
        con.execute(f"DROP INDEX IF EXISTS {quote_ident(_TIMELINE_INDEX)}")
        con.execute(f"ALTER TABLE requests RENAME TO {LOCAL}")
    sel = ", ".join(quote_ident(c) for c in schema.columns("requests"))
    con.execute(f"CREATE OR REPLACE VIEW requests AS SELECT {sel} FROM {LOCAL}" + "".join(
        f" UNION ALL SELECT {sel} FROM {quote_ident(_VIEW.format(n))}" for n in attached))
