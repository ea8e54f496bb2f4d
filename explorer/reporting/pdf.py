"""report.pdf: the report's HTML typeset on A4 pages by Qt's own PDF writer (QPdfWriter +
QTextDocument, no browser engine). Fonts are embedded by Qt; the default font family list puts
a CJK-capable face (WenQuanYi Micro Hei) behind DejaVu Sans so Chinese cluster names print."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QMarginsF, QSizeF, QUrl
from PySide6.QtGui import (QFont, QImage, QPageLayout, QPageSize, QPdfWriter, QTextBlockFormat, QTextCursor,
                           QTextDocument)

from .html import build_html
from .images import CJK_FAMILIES, ensure_app


def save_pdf(doc: dict, images: dict[str, Path], path: Path, cases=None, notes=None) -> Path:
    """Typeset the report on A4 portrait pages (15 mm margins) into `path`, atomically;
    returns it. Raises OSError when the file cannot be written (ENOSPC for a full disk)."""
    from explorer.core.atomic import write_bytes
    return write_bytes(path, pdf_bytes(doc, images, cases=cases, notes=notes))


def typeset(doc: dict, images: dict[str, Path], cases=None, notes=None) -> QTextDocument:
    """The report's HTML laid out on A4 pages (the document pdf_bytes prints): every table's
    header row repeated on the pages it continues on, headings kept with their section."""
    ensure_app()
    text = QTextDocument()
    font = QFont()
    font.setFamilies(CJK_FAMILIES)
    font.setPointSize(9)
    text.setDefaultFont(font)
    for name, img_path in images.items():
        text.addResource(QTextDocument.ResourceType.ImageResource, QUrl(f"img://{name}"),
                         QImage(str(img_path)))
    text.setHtml(build_html(doc, images, image_src=lambda n, _p: f"img://{n}", cases=cases,
                            for_pdf=True, notes=notes))
    text.setPageSize(QSizeF(PAGE.width(), PAGE.height()))
    repeat_table_headers(text)
    keep_headings_with_next(text)
    return text


def _writer(buf: QBuffer, title: str) -> QPdfWriter:
    writer = QPdfWriter(buf)
    writer.setPageLayout(LAYOUT)
    writer.setResolution(DPI)
    writer.setTitle(title)
    writer.setCreator("Trace Explorer")
    return writer


DPI = 144
LAYOUT = QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                     QMarginsF(15, 15, 15, 15), QPageLayout.Unit.Millimeter)
PAGE = LAYOUT.paintRectPixels(DPI)


def pdf_bytes(doc: dict, images: dict[str, Path], cases=None, notes=None) -> bytes:
    """The report typeset on A4 portrait pages (15 mm margins) as PDF bytes: typeset in
    memory, so that writing the file is one write whose failure (a full disk) is seen."""
    text = typeset(doc, images, cases=cases, notes=notes)
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = _writer(buf, doc.get("meta", {}).get("title") or "Trace Explorer report")
    text.print_(writer)
    del writer  # ends the PDF (its trailer is written when the writer goes)
    data = bytes(buf.data())
    if not data:
        raise OSError("the PDF writer produced nothing")
    return data


def repeat_table_headers(text: QTextDocument) -> int:
    """A table whose first row is a header (bold cells, as <th> prints) repeats it on every
    page it continues on (Qt splits tables by rows); returns how many tables got one."""
    from PySide6.QtGui import QFont as _F, QTextTable
    n = 0
    frames = list(text.rootFrame().childFrames())
    while frames:
        f = frames.pop()
        frames.extend(f.childFrames())
        if not isinstance(f, QTextTable) or f.rows() < 3:
            continue
        heads = [f.cellAt(0, c).format().fontWeight() >= _F.Weight.Bold for c in range(f.columns())]
        if all(heads):
            fmt = f.format()
            fmt.setHeaderRowCount(1)
            f.setFormat(fmt)
            n += 1
    return n


def _page(y: float, page_h: float) -> int:
    return int(y // page_h)


KEEP_LINES, KEEP_PX = 3, 40  # a heading keeps this much of its section below it on its page


def _kept_bottom(lay, block) -> float | None:
    """Where the start of the section after heading `block` ends: the bottom of its third line
    of text, or of its first KEEP_PX of height (one picture line is enough); None at the end."""
    nxt, count, first_top, bottom = block.next(), 0, None, None
    while nxt.isValid():
        if nxt.blockFormat().headingLevel() > 0 and count:
            break
        r = lay.blockBoundingRect(nxt)
        n = nxt.layout().lineCount()
        for i in range(n) if n else [None]:
            line = nxt.layout().lineAt(i) if i is not None else None
            if line is not None and line.isValid():
                top, bottom = r.top() + line.y(), r.top() + line.y() + line.height()
            else:
                top, bottom = r.top(), r.bottom()
            first_top = top if first_top is None else first_top
            count += 1
            if count >= KEEP_LINES or bottom - first_top >= KEEP_PX:
                return bottom
        nxt = nxt.next()
    return bottom


def _text_top(lay, block) -> float:
    """Where a block's first line of text starts (below its top margin): a heading whose margin
    crosses a page foot but whose text starts the next page already stands at that page's top."""
    top = lay.blockBoundingRect(block).top()
    line = block.layout().lineAt(0) if block.layout().lineCount() else None
    return top + line.y() if line is not None and line.isValid() else top


def orphan_headings(text: QTextDocument) -> list:
    """Heading blocks (h1-h6) left at a page foot: the first lines of their section (see
    _kept_bottom: three lines or a picture) fall on a later page."""
    page_h = text.pageSize().height()
    lay = text.documentLayout()
    out = []
    block = text.begin()
    while block.isValid():
        if block.blockFormat().headingLevel() > 0:
            top = _text_top(lay, block)
            bottom = _kept_bottom(lay, block)
            if bottom is not None and _page(bottom - 0.5, page_h) > _page(top, page_h):
                out.append(block)
        block = block.next()
    return out


def _row_span(lay, table, r: int) -> tuple[float, float]:
    """(top, bottom) of row r of `table` as laid out (its cells' blocks)."""
    top, bottom = None, None
    for c in range(table.columns()):
        cell = table.cellAt(r, c)
        if cell.row() != r or cell.column() != c:
            continue
        block = cell.firstCursorPosition().block()
        last = cell.lastCursorPosition().block()
        while block.isValid():
            rect = lay.blockBoundingRect(block)
            top = rect.top() if top is None else min(top, rect.top())
            bottom = rect.bottom() if bottom is None else max(bottom, rect.bottom())
            if block == last:
                break
            block = block.next()
    return top or 0.0, bottom or 0.0


def _page_break(block, policy: QTextBlockFormat.PageBreakFlag) -> None:
    cur = QTextCursor(block)
    fmt = QTextBlockFormat(block.blockFormat())
    fmt.setPageBreakPolicy(policy)
    cur.setBlockFormat(fmt)


def _keep_row_whole(lay, table, r: int, page_h: float) -> bool:
    """A row that Qt would split over two pages (its cells' first lines at a page foot, the
    rest under the repeated header) starts the next page instead, when it fits in half a
    page: the row above it ends with a page break, which Qt's table layout answers by moving
    the next row to the next page's top (under the header). True when the row moved."""
    top, bottom = _row_span(lay, table, r)
    if _page(bottom - 0.5, page_h) == _page(top, page_h) or bottom - top > page_h / 2:
        return False
    _page_break(table.cellAt(r - 1, 0).lastCursorPosition().block(),
                QTextBlockFormat.PageBreakFlag.PageBreak_AlwaysAfter)
    return True


def keep_headings_with_next(text: QTextDocument) -> int:
    """Start a new page before a heading that would stand alone at a page foot (Qt's text
    layout has no keep-with-next), and only when its kept part would fit on an empty page (a
    longer one splits where it is); the same for a table row that would be split over two
    pages (Qt splits a row between the lines of its cells: the row's first line at a page
    foot, the rest under the repeated header). Headings and rows are settled in reading
    order, each after the breaks above it, so no break is left from an earlier layout (a
    stale one emptied a page). Returns how many headings and rows start a page."""
    from PySide6.QtGui import QTextTable
    page_h = text.pageSize().height()
    lay = text.documentLayout()
    moved = 0
    block = text.begin()
    while block.isValid():
        table = QTextCursor(block).currentTable()
        if block.blockFormat().headingLevel() > 0 and table is None:
            lay.documentSize()  # laid out with the breaks above
            top = _text_top(lay, block)
            bottom = _kept_bottom(lay, block)
            if bottom is not None and _page(bottom - 0.5, page_h) > _page(top, page_h) \
                    and bottom - top <= page_h:
                _page_break(block, QTextBlockFormat.PageBreakFlag.PageBreak_AlwaysBefore)
                moved += 1
        elif isinstance(table, QTextTable):
            cell = table.cellAt(QTextCursor(block))
            header = table.format().headerRowCount()
            if cell.column() == 0 and cell.row() >= max(1, header + 1) \
                    and block == cell.firstCursorPosition().block():
                lay.documentSize()
                moved += _keep_row_whole(lay, table, cell.row(), page_h)
        block = block.next()
    return moved
