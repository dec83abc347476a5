"""PDFs written by hand for the tests: text pages (a ``BT … Tj ET`` content stream each),
scanned pages (an image XObject and no text), and a correct cross-reference table."""

from __future__ import annotations


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _text_page(lines: list[str]) -> bytes:
    body = ["BT /F1 12 Tf 72 720 Td 14 TL"]
    body += [f"({_escape(line)}) Tj T*" for line in lines]
    body.append("ET")
    return "\n".join(body).encode("latin-1")


SCAN = b"q 200 0 0 200 100 400 cm /Im1 Do Q"


def pdf_bytes(pages: list[list[str] | None]) -> bytes:
    """A PDF whose pages hold these lines of text (None: a scanned page, an image only)."""
    objects: dict[int, bytes] = {}
    font, image = 3, 4
    objects[font] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    pixels = bytes((x * 16 + y * 8) % 256 for y in range(32) for x in range(32))
    objects[image] = (
        b"<< /Type /XObject /Subtype /Image /Width 32 /Height 32 /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 /Length " + str(len(pixels)).encode() + b" >>\nstream\n"
        + pixels + b"\nendstream"
    )  # fmt: skip
    kids = []
    number = 5
    for lines in pages:
        content = SCAN if lines is None else _text_page(lines)
        objects[number + 1] = (
            b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content
            + b"\nendstream"
        )  # fmt: skip
        objects[number] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents "
            + str(number + 1).encode()
            + b" 0 R /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 4 0 R >> >> >>"
        )
        kids.append(f"{number} 0 R")
        number += 2
    objects[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>".encode()
    return assemble(objects)


def assemble(objects: dict[int, bytes], root: int = 1) -> bytes:
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n".encode() + objects[number] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    for number in range(1, size):
        if number in offsets:
            out += f"{offsets[number]:010d} 00000 n \n".encode()
        else:
            out += b"0000000000 65535 f \n"
    out += f"trailer\n<< /Size {size} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def nested_pdf(depth: int) -> bytes:
    """A one-page PDF whose catalog holds an array nested ``depth`` levels deep."""
    deep = b"[" * depth + b"]" * depth
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R /Deep " + deep + b" >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Extra "
        + deep + b" >>",
        4: b"<< /Length 0 >>\nstream\n\nendstream",
    }  # fmt: skip
    return assemble(objects)
