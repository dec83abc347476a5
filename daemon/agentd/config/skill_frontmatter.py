"""The YAML front matter of a ``SKILL.md``: the subset skills use (lists, mappings, block
scalars), parsed strictly. Agent profiles and custom commands use the flat grammar of
:mod:`agentd.config.frontmatter`.

Between a first line ``---`` and the next ``---``: ``key: value`` lines, where a value is
plain or quoted text (``"…"`` with JSON-style escapes, ``'…'`` with ``''``), an inline
list ``[a, b]``, a block scalar (``|`` or ``>``, with ``-``/``+``) or, on the lines below
an empty value, a list (``- item``) or a mapping of plain ``key: value`` pairs (one level).
Comments (``#`` at the start of a line) and blank lines are skipped. Anything else is a
:class:`FrontMatterError` naming the line.
"""

from __future__ import annotations

import re

import msgspec

Value = str | list[str] | dict[str, str]
_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")


class FrontMatterError(ValueError):
    """The front matter is missing or not in the supported form."""


def split(text: str) -> tuple[list[str], str]:
    """The front matter's lines and the body after it."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError("it does not start with a `---` front matter block")
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            return lines[1:end], "\n".join(lines[end + 1 :])
    raise FrontMatterError("its front matter has no closing `---`")


def parse(lines: list[str]) -> dict[str, Value]:
    """The keys of the front matter ``lines`` (see the module docstring)."""
    out: dict[str, Value] = {}
    index = 0
    while index < len(lines):
        line = lines[index].rstrip()
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY.match(line)
        if match is None or line[0].isspace():
            raise FrontMatterError(f"line {index + 1}: expected `key: value`, got {line.strip()!r}")
        key, raw = match[1], (match[2] or "").strip()
        block, index = _indented(lines, index)
        out[key] = _value(raw, block, index)
    return out


def _indented(lines: list[str], index: int) -> tuple[list[str], int]:
    block = []
    while index < len(lines) and (not lines[index].strip() or lines[index][:1].isspace()):
        block.append(lines[index].rstrip())
        index += 1
    while block and not block[-1].strip():
        block.pop()
    return block, index


def _value(raw: str, block: list[str], line: int) -> Value:
    if raw[:1] in ("|", ">"):
        return _block_scalar(raw, block)
    if raw and block:
        return _scalar(" ".join([raw, *(b.strip() for b in block if b.strip())]), line)
    if raw:
        return _scalar_or_list(raw, line)
    items = [b.strip() for b in block if b.strip() and not b.strip().startswith("#")]
    if not items:
        return ""
    if all(item.startswith("- ") or item == "-" for item in items):
        return [str(_scalar(item[1:].strip(), line)) for item in items]
    mapping: dict[str, str] = {}
    for item in items:
        match = _KEY.match(item)
        if match is None:
            raise FrontMatterError(f"near line {line}: expected `key: value` in {item!r}")
        mapping[match[1]] = str(_scalar((match[2] or "").strip(), line))
    return mapping


def _block_scalar(raw: str, block: list[str]) -> str:
    indent = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
    body = [b[indent:] for b in block]
    text = "\n".join(body) if raw[0] == "|" else _folded(body)
    return text if raw.endswith("-") else text + "\n"


def _folded(lines: list[str]) -> str:
    out, paragraph = [], []
    for line in lines:
        if line.strip():
            paragraph.append(line.strip())
        else:
            out.append(" ".join(paragraph))
            paragraph = []
    out.append(" ".join(paragraph))
    return "\n".join(out)


def _scalar_or_list(raw: str, line: int) -> Value:
    if raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1].strip()
        return [str(_scalar(part.strip(), line)) for part in inner.split(",")] if inner else []
    return _scalar(raw, line)


def _scalar(raw: str, line: int) -> str:
    if raw.startswith('"'):
        try:
            value = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            raise FrontMatterError(f"near line {line}: a bad double-quoted string") from None
        return str(value)
    if raw.startswith("'"):
        if not raw.endswith("'") or len(raw) < 2:
            raise FrontMatterError(f"near line {line}: an unclosed single-quoted string")
        return raw[1:-1].replace("''", "'")
    if " #" in raw:
        raw = raw.split(" #", 1)[0].rstrip()
    return raw
