"""Text from the model, tools, servers and web pages made safe to show on a terminal.

Terminals obey control characters wherever they come from: an ``ESC`` starts a sequence that
can move the cursor over what was printed (an approval shows one command, bash runs another),
set the window title, or write the clipboard (OSC 52); a bidi override (``U+202E``) shows text
in an order other than the one it runs in. :func:`escape_controls` writes each such character
as a visible escape (``\\x1b``, ``\\u202e``, ``\\r``): every C0 control but the layout
ones (newline, tab), ``DEL``, every C1 control, the bidi marks, embeddings, overrides and
isolates, and the Unicode line and paragraph separators. :func:`scrub` does it for every
string inside a value (lists, dicts and msgspec Structs: an event, a permission request),
returning the value itself when nothing needed escaping. agentctl uses both, and so does the
LSP front-end for what it hands an editor that may print it to a terminal.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
"""Every character :func:`escape_controls` escapes (newline and tab excepted)."""
_UNSAFE_IN_JSON = re.compile(
    rb"\\(?:u00|[bfr])|\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]"
)
"""Where msgspec's JSON of a value may hold one of them: the escapes it writes for C0
controls (``\\n`` and ``\\t`` excepted), and the UTF-8 of ``DEL``, the C1 controls, the
bidi marks and the line and paragraph separators, which it writes as they are. A superset
(an escaped backslash before ``r`` matches too): what it does not find is not there."""

T = TypeVar("T")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code == 0x0D:
        return "\\r"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, *, crlf: bool = True) -> str:
    """``text`` with every unsafe character written as a visible escape (newlines and tabs
    kept: they are layout); with ``crlf`` a ``\\r\\n`` line end counts as a newline first
    (pass False for a command, where a carriage return means something)."""
    if _UNSAFE.search(text) is None:
        return text
    if crlf:
        text = text.replace("\r\n", "\n")
    return _UNSAFE.sub(_visible, text)


def has_controls(text: str) -> bool:
    """Whether :func:`escape_controls` would change ``text`` (a ``\\r\\n`` counts)."""
    return _UNSAFE.search(text) is not None


def scrub(value: T, *, crlf: bool = True) -> T:
    """``value`` with :func:`escape_controls` applied to every string in it (dict keys too),
    through lists, tuples, dicts and msgspec Structs; unchanged parts are the same objects.

    A value whose JSON holds no unsafe character is returned at once: one encode and one
    search of the bytes, where most events are a text delta, cost less than walking every
    field of every event."""
    if _clean(value):
        return value
    return _scrub(value, crlf)  # type: ignore[no-any-return]


def _clean(value: Any) -> bool:
    """Whether no string in ``value`` holds an unsafe character, judged from its JSON
    (:data:`_UNSAFE_IN_JSON`); False when it has no JSON (then the walk decides)."""
    try:
        encoded = msgspec.json.encode(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return _UNSAFE_IN_JSON.search(encoded) is None


def _scrub(value: Any, crlf: bool) -> Any:
    if isinstance(value, str):
        return escape_controls(value, crlf=crlf)
    if isinstance(value, msgspec.Struct):
        changed = {}
        for name in value.__struct_fields__:
            old = getattr(value, name)
            new = _scrub(old, crlf)
            if new is not old:
                changed[name] = new
        return msgspec.structs.replace(value, **changed) if changed else value
    if isinstance(value, list | tuple):
        items = [_scrub(item, crlf) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return type(value)(items)
    if isinstance(value, dict):
        pairs = [(_scrub(k, crlf), _scrub(v, crlf)) for k, v in value.items()]
        if all(nk is k and nv is v for (nk, nv), (k, v) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    return value
