"""``read`` of a PDF: text per page with markers, page ranges, scans as images (or named for
a text model), the page cap on a 500-page file, and clear errors for encrypted, truncated,
malicious and fake PDFs (parsed in a child process)."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path

import pytest
from pypdf import PdfWriter

from agentd.protocol.content import ImageContent, TextContent
from agentd.protocol.document_details import ReadPdfDetails
from agentd.tools.base import ToolContext
from agentd.tools.defaults import ToolSettings
from tests.documents.pdfs import nested_pdf, pdf_bytes
from tests.tools.conftest import call, text_of


def _details(result: object) -> ReadPdfDetails:
    details = getattr(result, "details", None)
    assert isinstance(details, ReadPdfDetails), result
    return details


async def test_text_per_page_with_markers(work: Path, ctx: ToolContext) -> None:
    (work / "a.pdf").write_bytes(pdf_bytes([["Hello world", "second line"], ["Page (two)"]]))
    result = await call("read", ctx, path="a.pdf")
    assert text_of(result) == (
        "PDF a.pdf: 2 pages; pages 1-2 below.\n\n"
        "--- page 1 of 2 ---\nHello world\nsecond line\n\n"
        "--- page 2 of 2 ---\nPage (two)"
    )
    details = _details(result)
    assert (details.pages, details.first, details.last, details.truncated) == (2, 1, 2, False)
    assert details.path == str(work / "a.pdf")


@pytest.mark.parametrize(
    ("pages", "shown"), [("2", [2]), ("2-3", [2, 3]), ("3-", [3, 4]), (" 1 - 2 ", [1, 2])]
)
async def test_page_ranges(work: Path, ctx: ToolContext, pages: str, shown: list[int]) -> None:
    (work / "a.pdf").write_bytes(pdf_bytes([[f"text of page {n}"] for n in range(1, 5)]))
    result = await call("read", ctx, path="a.pdf", pages=pages)
    text = text_of(result)
    for number in range(1, 5):
        assert (f"text of page {number}" in text) == (number in shown), (pages, text)
    details = _details(result)
    assert (details.first, details.last) == (shown[0], shown[-1])


async def test_bad_ranges_and_pages_elsewhere(work: Path, ctx: ToolContext) -> None:
    (work / "a.pdf").write_bytes(pdf_bytes([["one"]]))
    for pages, message in [
        ("x", 'pages must look like "3" or "3-5"'),
        ("0", 'pages must look like "3"'),
        ("3-2", "the last page comes before the first"),
        ("5", "a.pdf: it has 1 page(s)."),
    ]:
        result = await call("read", ctx, path="a.pdf", pages=pages)
        assert result.is_error
        assert message in text_of(result)
    (work / "t.txt").write_text("x\n")
    text = await call("read", ctx, path="t.txt", pages="1")
    assert "`pages` is for PDFs" in text_of(text)


async def test_a_scan_goes_to_a_vision_model_as_an_image(work: Path, ctx: ToolContext) -> None:
    (work / "s.pdf").write_bytes(pdf_bytes([["typed page"], None]))
    result = await call("read", ctx, path="s.pdf")
    assert isinstance(result.output, list)
    text, image = result.output
    assert isinstance(text, TextContent)
    assert "--- page 2 of 2 (no text layer: sent as an image) ---" in text.text
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    png = base64.b64decode(image.data)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20]), int.from_bytes(png[20:24])
    assert max(width, height) <= 1568
    assert width > 100
    details = _details(result)
    assert (details.image_pages, details.images) == ([2], 1)


async def test_a_text_model_is_told_a_page_is_image_only(work: Path) -> None:
    (work / "s.pdf").write_bytes(pdf_bytes([None]))
    ctx = ToolContext(cwd=work, settings=ToolSettings(accept_images=False))
    result = await call("read", ctx, path="s.pdf")
    assert "--- page 1 of 1 (image only, no text layer: the current model cannot view images)" in (
        text_of(result)
    )
    assert _details(result).image_pages == [1]


async def test_a_500_page_pdf_is_read_20_pages_at_a_time(work: Path, ctx: ToolContext) -> None:
    pages = [[f"page {n} line {k}" for k in range(30)] for n in range(1, 501)]
    (work / "big.pdf").write_bytes(pdf_bytes(pages))
    first = await call("read", ctx, path="big.pdf")
    details = _details(first)
    assert (details.pages, details.first, details.last) == (500, 1, 20)
    assert (details.truncated, details.next_page) == (True, 21)
    assert '[Stopped at page 20 (20 pages per read). Use pages: "21-" to go on.]' in (
        text_of(first)
    )
    late = await call("read", ctx, path="big.pdf", pages="490-")
    details = _details(late)
    assert (details.first, details.last, details.truncated) == (490, 500, False)
    assert "page 500 line 29" in text_of(late)


async def test_output_limit_cuts_between_pages(work: Path) -> None:
    pages = [[f"page {n} " + "x" * 80 for _ in range(20)] for n in range(1, 11)]
    (work / "wide.pdf").write_bytes(pdf_bytes(pages))
    ctx = ToolContext(cwd=work, settings=ToolSettings(max_output_bytes=4096))
    result = await call("read", ctx, path="wide.pdf")
    details = _details(result)
    assert details.truncated
    assert details.last < 10
    assert "(the output limit)" in text_of(result)


def _encrypted(user_password: str) -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(pdf_bytes([["secret text"]])))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


async def test_encrypted_pdfs(work: Path, ctx: ToolContext) -> None:
    (work / "locked.pdf").write_bytes(_encrypted("pw"))
    locked = await call("read", ctx, path="locked.pdf")
    assert locked.is_error
    assert text_of(locked) == "locked.pdf: it is encrypted with a password."
    (work / "owner.pdf").write_bytes(_encrypted(""))  # an owner password only: readable
    opened = await call("read", ctx, path="owner.pdf")
    assert "secret text" in text_of(opened)


async def test_broken_and_hostile_files_get_clear_errors(work: Path, ctx: ToolContext) -> None:
    whole = pdf_bytes([["some text"]])
    (work / "cut.pdf").write_bytes(whole[: len(whole) // 3])
    (work / "fake.pdf").write_text("just text, not a PDF\n")
    (work / "deep.pdf").write_bytes(nested_pdf(200_000))
    for name in ("cut.pdf", "fake.pdf", "deep.pdf"):
        result = await call("read", ctx, path=name)
        assert result.is_error, (name, result.output)
        assert text_of(result).startswith(f"{name}: "), text_of(result)
        assert "Traceback" not in text_of(result)


async def test_the_sandbox_applies(tmp_path: Path) -> None:
    workspace = (tmp_path / "ws").resolve()
    workspace.mkdir()
    (tmp_path / "out.pdf").write_bytes(pdf_bytes([["outside"]]))
    (workspace / "link.pdf").symlink_to(tmp_path / "out.pdf")
    ctx = ToolContext(cwd=workspace, workspace=workspace)
    result = await call("read", ctx, path="link.pdf")
    assert result.is_error
    assert "which is outside the workspace" in text_of(result)


def _workers() -> list[int]:
    """Live PDF parsing children of this process."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = next(line for line in status.splitlines() if line.startswith("PPid:"))
        if b"pdfwork.py" in cmdline and int(parent.split()[1]) == os.getpid():
            found.append(int(entry.name))
    return found


async def test_a_parse_past_its_time_is_given_up_and_killed(work: Path) -> None:
    (work / "slow.pdf").write_bytes(pdf_bytes([[f"w{n}" for n in range(100_000)]]))
    ctx = ToolContext(cwd=work, settings=ToolSettings(pdf_timeout=0.5))
    result = await call("read", ctx, path="slow.pdf")
    assert result.is_error
    assert text_of(result).startswith("slow.pdf took more than 0.5 s to parse and was given up.")
    assert _workers() == []
