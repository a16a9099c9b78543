"""Writes a small, valid PDF with real text objects (so pypdf extracts them), without extra dependencies."""

from __future__ import annotations

from pathlib import Path


def write_pdf(path: Path, pages: list[list[str]]) -> Path:
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    pages_id = len(objects) + 1 + 2 * len(pages)  # the Pages object comes after every page and stream
    page_ids = []
    for lines in pages:
        text = (
            b"BT /F1 11 Tf 50 780 Td 14 TL "
            + b" ".join(
                b"("
                + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")
                + b") '"
                for line in lines
            )
            + b" ET"
        )
        stream = add(b"<< /Length %d >>\nstream\n" % len(text) + text + b"\nendstream")
        page_ids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 842] "
                b"/Resources << /Font << /F1 %d 0 R >> >> "
                b"/Contents %d 0 R >>" % (pages_id, font, stream)
            )
        )
    kids = b" ".join(b"%d 0 R" % p for p in page_ids)
    assert add(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))) == pages_id
    catalog = add(b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        catalog,
        xref,
    )
    path.write_bytes(bytes(out))
    return path
