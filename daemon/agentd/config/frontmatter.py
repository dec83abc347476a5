"""The front matter of agentd's Markdown control files (agent profiles, custom commands): one
parser, pure (text in, fields out; the callers read the files).

The block opens the text with a ``---`` line and ends at the next ``---`` line; the rest is
the body. Inside, each line is ``key: value`` (keys case-insensitive, ``_`` read as ``-``;
a value in matching quotes loses them; an unquoted value loses a trailing `` # comment``),
a blank line, or a ``# comment``. A *list* key also takes ``[a, b]`` or ``a, b`` and ``- item``
lines below it.

With ``keys`` (the names a caller knows), an unknown key or a line of another shape is an
error naming it; without, both are skipped (files written for other tools carry keys agentd
does not know, and YAML agentd does not read).
"""

from __future__ import annotations

import re
from collections.abc import Collection

Fields = dict[str, str | list[str]]

_PAIR = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)\s*:\s*(.*)$")
_ITEM = re.compile(r"^\s+-\s*(.+)$")


def parse_front_matter(
    text: str,
    *,
    required: bool = False,
    keys: Collection[str] | None = None,
    lists: Collection[str] = (),
) -> tuple[Fields, str]:
    """``(fields, body)`` of ``text`` (see the module docstring). ``lists`` are the keys read
    as lists of strings; every other value is a string. Without a block: no fields and all
    of ``text`` as the body, or ValueError when the block is ``required``. ValueError for a
    block that is not closed, and (with ``keys``) for an unknown key or a malformed line."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        if required:
            raise ValueError("no front matter (a '---' block with name and description)")
        return {}, text
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise ValueError("its front matter is not closed by a '---' line")
    fields: Fields = {}
    key = ""
    for number, line in enumerate(lines[1:end], 2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.match(line)
        listed = fields.get(key)
        if item is not None and isinstance(listed, list):
            listed.append(_value(item[1]))
            continue
        pair = _PAIR.match(line)
        if pair is None:
            if keys is not None:
                raise ValueError(f"line {number} of its front matter is not `key: value`")
            continue
        key = pair[1].lower().replace("_", "-")
        if keys is not None and key not in keys:
            raise ValueError(f"unknown front matter key {pair[1]!r} (known: {', '.join(keys)})")
        if key in lists:
            fields[key] = [_value(v) for v in _value(pair[2]).strip("[]").split(",") if v.strip()]
        elif value := _value(pair[2]):
            fields[key] = value
    return fields, "\n".join(lines[end + 1 :])


def _value(raw: str) -> str:
    """A value without its quotes, or (unquoted) without a trailing comment."""
    value = raw.strip()
    if value[:1] in ("'", '"'):
        close = value.find(value[0], 1)
        rest = value[close + 1 :].strip() if close > 0 else "x"
        if not rest or rest.startswith("#"):
            return value[1:close]
    return re.sub(r"\s+#.*$", "", value)


def text_fields(fields: Fields) -> dict[str, str]:
    """The string values of ``fields`` (for callers without list keys)."""
    return {key: value for key, value in fields.items() if isinstance(value, str)}
