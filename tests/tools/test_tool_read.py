"""The read tool against real files."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from agentd.protocol.content import ImageContent, TextContent
from agentd.tools.base import ToolContext
from agentd.tools.files.fileio import STAMPS_KEY, stamp_of
from tests.tools.conftest import call, text_of

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
    "AAAABJRU5ErkJggg=="
)


def lines(count: int) -> str:
    return "".join(f"line {n}\n" for n in range(1, count + 1))


async def test_numbered_lines_like_cat_n(work: Path, ctx: ToolContext) -> None:
    (work / "a.txt").write_text("alpha\nbeta\r\ngamma")
    result = await call("read", ctx, path="a.txt")
    assert text_of(result) == "     1\talpha\n     2\tbeta\n     3\tgamma"
    assert result.details.total_lines == 3
    assert not result.is_error


async def test_offset_and_limit_with_continuation_hint(work: Path, ctx: ToolContext) -> None:
    (work / "a.txt").write_text(lines(10))
    result = await call("read", ctx, path="a.txt", offset=4, limit=3)
    out = text_of(result)
    assert out.splitlines()[:3] == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert "[Showing lines 4-6 of 10. Use offset=7 to continue.]" in out
    assert result.details.next_offset == 7


async def test_default_limit_is_2000_lines(work: Path, ctx: ToolContext) -> None:
    (work / "big.txt").write_text(lines(5000))
    out = text_of(await call("read", ctx, path="big.txt"))
    assert "  2000\tline 2000" in out
    assert "  2001\t" not in out
    assert "Showing lines 1-2000 of 5000" in out
    assert "offset=2001" in out


async def test_byte_limit_cuts_and_says_so(work: Path, ctx: ToolContext) -> None:
    (work / "wide.txt").write_text(("x" * 1000 + "\n") * 100)
    out = text_of(await call("read", ctx, path="wide.txt"))
    assert "(50 KB limit)" in out
    shown = [line for line in out.splitlines() if "\t" in line]
    assert 40 < len(shown) < 60
    assert len(out.encode()) < 52 * 1024


async def test_limits_come_from_options(work: Path, ctx: ToolContext) -> None:
    (work / "a.txt").write_text(lines(10))
    ctx.settings.max_output_lines = 2
    out = text_of(await call("read", ctx, path="a.txt"))
    assert "Showing lines 1-2 of 10" in out


async def test_offset_past_end_names_line_count(work: Path, ctx: ToolContext) -> None:
    (work / "a.txt").write_text(lines(5))
    result = await call("read", ctx, path="a.txt", offset=6)
    assert result.is_error
    assert "offset 6 is past the end" in text_of(result)
    assert "has 5 lines" in text_of(result)


async def test_last_line_without_newline_is_readable_by_offset(
    work: Path, ctx: ToolContext
) -> None:
    (work / "a.txt").write_text("one\ntwo\nthree")
    assert text_of(await call("read", ctx, path="a.txt", offset=3)) == "     3\tthree"
    assert "has 3 lines" in text_of(await call("read", ctx, path="a.txt", offset=4))


async def test_empty_file(work: Path, ctx: ToolContext) -> None:
    (work / "empty.txt").write_text("")
    result = await call("read", ctx, path="empty.txt")
    assert not result.is_error
    assert "empty" in text_of(result)


async def test_binary_refused_with_hint(work: Path, ctx: ToolContext) -> None:
    (work / "blob.bin").write_bytes(b"abc\0def" * 10)
    result = await call("read", ctx, path="blob.bin")
    assert result.is_error
    assert "binary" in text_of(result)
    assert "bash" in text_of(result)


async def test_image_returned_as_image_content(work: Path, ctx: ToolContext) -> None:
    (work / "dot.png").write_bytes(PNG)
    result = await call("read", ctx, path="dot.png")
    assert isinstance(result.output, list)
    text, image = result.output
    assert isinstance(text, TextContent)
    assert "image/png" in text.text
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG


async def test_image_extension_with_other_bytes_is_not_an_image(
    work: Path, ctx: ToolContext
) -> None:
    (work / "notes.png").write_text("just text\n")
    assert text_of(await call("read", ctx, path="notes.png")) == "     1\tjust text"


async def test_long_lines_are_cut_with_marker(work: Path, ctx: ToolContext) -> None:
    (work / "long.txt").write_text("a" * 5000 + "\nshort\n" + "b" * 100_000 + "\nend\n")
    out = text_of(await call("read", ctx, path="long.txt"))
    first, second, third, fourth = out.splitlines()[:4]
    assert first == "     1\t" + "a" * 2000 + "… [line cut at 2000 chars]"
    assert second == "     2\tshort"
    assert third.startswith("     3\tbbb")
    assert third.endswith("[line cut at 2000 chars]")
    assert fourth == "     4\tend"
    assert "2 line(s) longer than 2000 chars were cut" in out


async def test_late_offset_in_a_large_file(work: Path, ctx: ToolContext) -> None:
    with (work / "big.txt").open("w") as file:
        for n in range(1, 300_001):
            file.write(f"row {n}\n")
    result = await call("read", ctx, path="big.txt", offset=299_999)
    assert text_of(result) == "299999\trow 299999\n300000\trow 300000"
    result = await call("read", ctx, path="big.txt", offset=150_000, limit=1)
    assert text_of(result).startswith("150000\trow 150000\n[Showing lines 150000-150000 of 300000")


async def test_missing_file_suggests_similar_names(work: Path, ctx: ToolContext) -> None:
    (work / "config.yaml").write_text("x\n")
    result = await call("read", ctx, path="config.yml")
    assert result.is_error
    assert "does not exist" in text_of(result)
    assert "config.yaml" in text_of(result)


async def test_directory_is_refused(work: Path, ctx: ToolContext) -> None:
    (work / "sub").mkdir()
    result = await call("read", ctx, path="sub")
    assert result.is_error
    assert "ls" in text_of(result)


async def test_absolute_and_home_paths(
    work: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "a.txt").write_text("hi\n")
    ctx.cwd = Path("/")
    assert text_of(await call("read", ctx, path=str(work / "a.txt"))) == "     1\thi"
    monkeypatch.setenv("HOME", str(work))
    assert text_of(await call("read", ctx, path="~/a.txt")) == "     1\thi"


async def test_read_records_the_stamp(work: Path, ctx: ToolContext) -> None:
    target = work / "a.txt"
    target.write_text("hi\n")
    await call("read", ctx, path="a.txt")
    assert ctx.state[STAMPS_KEY][str(target)] == stamp_of(target)


async def test_invalid_offset_is_a_validation_error(work: Path, ctx: ToolContext) -> None:
    (work / "a.txt").write_text("hi\n")
    result = await call("read", ctx, path="a.txt", offset=0)
    assert result.is_error
    assert "Invalid arguments for read" in text_of(result)
    assert "$.offset" in text_of(result)
