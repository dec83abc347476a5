"""What ``web_fetch`` does with its ``prompt``: the passages of a long page that match it.

A page past the result limits keeps its start; the rest is only in the spill file. When the
model said what it is looking for, the passages (blocks between blank lines) of the rest that
share the most words with the prompt are added after the start, best first and in page order
among equals, within a byte budget. Cheap and deterministic: word overlap, no second model.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)
_STOP_TEXT = """
the and for are but not you all any can had her was one our out has how its may new now see
two who did get use way what when where which with this that from have will your into than
then them they their there these those about would could should page find show tell give does
want need look looking
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())
MAX_PASSAGE_BYTES = 2048
"""A longer passage is cut to this many bytes (its start)."""


def prompt_words(prompt: str) -> frozenset[str]:
    """The words of ``prompt`` worth matching: three letters or more, no stop words,
    lower-cased."""
    return frozenset(w for w in map(str.lower, _WORD.findall(prompt)) if w not in _STOP_WORDS)


def matching_passages(rest: str, prompt: str, budget_bytes: int) -> list[str]:
    """The passages of ``rest`` sharing words with ``prompt``, best first, their UTF-8 sizes
    (plus a blank line each) within ``budget_bytes``; empty when nothing matches."""
    words = prompt_words(prompt)
    if not words or budget_bytes <= 0:
        return []
    scored = []
    for index, passage in enumerate(p.strip() for p in re.split(r"\n\s*\n", rest)):
        score = len(words & {w.lower() for w in _WORD.findall(passage)})
        if score:
            scored.append((-score, index, _cut(passage)))
    chosen: list[str] = []
    used = 0
    for _, _, passage in sorted(scored):
        size = len(passage.encode("utf-8")) + 2
        if used + size > budget_bytes:
            continue
        chosen.append(passage)
        used += size
    return chosen


def _cut(passage: str) -> str:
    data = passage.encode("utf-8")
    if len(data) <= MAX_PASSAGE_BYTES:
        return passage
    return data[:MAX_PASSAGE_BYTES].decode("utf-8", "ignore") + " …"
