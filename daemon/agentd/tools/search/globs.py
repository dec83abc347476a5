"""Glob matching in time linear in the path and the glob: no pattern can freeze the daemon.

Python's ``re`` backtracks (and holds the GIL while it does), so a glob such as
``"*a" * 14 + "b"`` translated naively to ``[^/]*a[^/]*a…b`` takes exponential time on a long
name. Here a glob is matched in two levels, neither of which can backtrack more than linearly:

- **Path segments.** The glob and the path are split at ``/``; a ``**`` segment matches any
  number of path segments (one or more when it ends the glob, so ``dir/**`` matches what is
  inside ``dir``, not ``dir`` itself). The segments are matched with a set of positions, one
  pass per glob segment: O(glob segments * path segments).
- **Within a segment.** ``*`` and ``?`` never match ``/``, so a segment is ``P0*P1*…*Pk`` with
  fixed-length pieces ``Pi`` (literals, ``?``, ``[…]``). Taking the leftmost match of each
  middle piece is always right, so each middle piece becomes an atomic group ``(?>.*?Pi)``
  that never gives back what it took; only the last ``.*Pk`` backtracks, linearly.

Syntax: ``*``, ``?``, ``[abc]`` / ``[!abc]`` / ``[^abc]``, ``**`` (as a whole segment; anywhere
else it is a plain ``*``, as in ``.gitignore``), ``{a,b}`` alternatives (nestable, at most
:data:`MAX_ALTERNATIVES` after expansion), and ``\\`` escapes. A glob that is not valid (an
empty range such as ``[z-a]``, too many alternatives) matches itself literally.
"""

from __future__ import annotations

import itertools
import re

import msgspec

MAX_ALTERNATIVES = 256

_ANY_SEGMENTS = None
Segment = re.Pattern[str] | None
"""A compiled path segment, or ``None`` for ``**``."""


class GlobTooComplex(ValueError):
    """The glob expands to more than :data:`MAX_ALTERNATIVES` alternatives."""


class Glob(msgspec.Struct, frozen=True):
    """A compiled glob; :meth:`match` tests a whole ``/``-separated path."""

    source: str
    alternatives: tuple[tuple[Segment, ...], ...]

    def match(self, path: str) -> bool:
        parts = path.split("/")
        return any(_match_segments(segments, parts) for segments in self.alternatives)


def compile_glob(glob: str) -> Glob:
    """Compile ``glob`` (see the module docstring); never raises."""
    try:
        alternatives = [_compile_alternative(text) for text in expand_braces(glob)]
    except (re.error, GlobTooComplex):
        alternatives = [tuple(re.compile(re.escape(p), re.DOTALL) for p in glob.split("/"))]
    return Glob(glob, tuple(alternatives))


def expand_braces(glob: str) -> list[str]:
    """Every alternative of ``{a,b}`` groups (an unclosed ``{`` is literal).

    Raises GlobTooComplex past :data:`MAX_ALTERNATIVES`.
    """
    opening = _find_top(glob, "{", 0)
    if opening < 0:
        return [glob]
    closing, commas = _brace_body(glob, opening)
    if closing < 0:
        head = glob[:opening] + "\\{"
        return [head + rest for rest in expand_braces(glob[opening + 1 :])]
    bounds = [opening, *commas, closing]
    choices = [glob[start + 1 : end] for start, end in itertools.pairwise(bounds)]
    results: list[str] = []
    for tail in expand_braces(glob[closing + 1 :]):
        for choice in choices:
            results.extend(head + tail for head in expand_braces(glob[:opening] + choice))
            if len(results) > MAX_ALTERNATIVES:
                raise GlobTooComplex(glob)
    return results


def _find_top(glob: str, char: str, start: int) -> int:
    """Index of the first unescaped ``char`` outside ``[…]`` from ``start``, or -1."""
    index = start
    while index < len(glob):
        if glob[index] == "\\":
            index += 2
            continue
        if glob[index] == "[" and (end := _class_end(glob, index)) > 0:
            index = end + 1
            continue
        if glob[index] == char:
            return index
        index += 1
    return -1


def _brace_body(glob: str, opening: int) -> tuple[int, list[int]]:
    """The index of the ``}`` closing the ``{`` at ``opening`` (-1 if none) and the indexes of
    its top-level commas."""
    depth, index = 0, opening
    commas: list[int] = []
    while index < len(glob):
        char = glob[index]
        if char == "\\":
            index += 2
            continue
        if char == "[" and (end := _class_end(glob, index)) > 0:
            index = end + 1
            continue
        depth += (char == "{") - (char == "}")
        if depth == 0:
            return index, commas
        if char == "," and depth == 1:
            commas.append(index)
        index += 1
    return -1, []


def _class_end(glob: str, index: int) -> int:
    """The ``]`` closing the class opened at ``index`` (a ``]`` right after ``[``, ``[!`` or
    ``[^`` is a member), or -1."""
    first = index + 1
    if first < len(glob) and glob[first] in "!^":
        first += 1
    return glob.find("]", first + 1)


def _compile_alternative(text: str) -> tuple[Segment, ...]:
    segments = [part for part in _split_segments(text) if part != ""]
    return tuple(_ANY_SEGMENTS if part == "**" else _compile_segment(part) for part in segments)


def _split_segments(text: str) -> list[str]:
    parts: list[str] = []
    start = index = 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == "[" and (end := _class_end(text, index)) > 0:
            index = end + 1
            continue
        if text[index] == "/":
            parts.append(text[start:index])
            start = index + 1
        index += 1
    parts.append(text[start:])
    return parts


def _compile_segment(segment: str) -> re.Pattern[str]:
    """``P0*P1*…*Pk`` as ``P0(?>.*?P1)…(?>.*?Pk-1).*Pk`` (see the module docstring)."""
    pieces = _star_pieces(segment)
    if len(pieces) == 1:
        return re.compile(pieces[0], re.DOTALL)
    middle = "".join(f"(?>.*?{piece})" for piece in pieces[1:-1])
    return re.compile(f"{pieces[0]}{middle}.*{pieces[-1]}", re.DOTALL)


def _star_pieces(segment: str) -> list[str]:
    """Regex sources of the fixed-length pieces between the stars of ``segment``."""
    pieces: list[str] = [""]
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            while index < len(segment) and segment[index] == "*":
                index += 1
            pieces.append("")
            continue
        if char == "[" and (end := _class_end(segment, index)) > 0:
            body = segment[index + 1 : end].replace("\\", "\\\\")
            if body[0] in "!^":
                body = "^" + body[1:]
            pieces[-1] += f"[{body}]"
            index = end + 1
            continue
        if char == "\\" and index + 1 < len(segment):
            pieces[-1] += re.escape(segment[index + 1])
            index += 2
            continue
        pieces[-1] += "." if char == "?" else re.escape(char)
        index += 1
    return pieces


def _match_segments(segments: tuple[Segment, ...], parts: list[str]) -> bool:
    """Whether the glob segments match the path segments (a set of positions, no
    backtracking)."""
    count = len(parts)
    positions = {0}
    for number, segment in enumerate(segments):
        if segment is _ANY_SEGMENTS:
            least = min(positions) + (1 if number == len(segments) - 1 else 0)
            positions = set(range(least, count + 1))
        else:
            positions = {p + 1 for p in positions if p < count and segment.fullmatch(parts[p])}
        if not positions:
            return False
    return count in positions
