"""The linear-time glob matcher: semantics, the pathological patterns, a cross-check."""

from __future__ import annotations

import random
import re

import pytest

from agentd.tools.search.globs import MAX_ALTERNATIVES, GlobTooComplex, compile_glob, expand_braces
from agentd.tools.search.ignore import parse_rule

CASES = [
    ("*.py", "a.py", True),
    ("*.py", "a/b.py", False),
    ("src/**/*.ts", "src/a/b/c.ts", True),
    ("src/**/*.ts", "src/c.ts", True),
    ("**/x/*.md", "x/a.md", True),
    ("**/x/*.md", "q/x/a.md", True),
    ("dir/**", "dir", False),
    ("dir/**", "dir/a/b", True),
    ("{a,b}.txt", "b.txt", True),
    ("{a,b}.txt", "c.txt", False),
    ("a{b,c{d,e}}f", "acef", True),
    ("{src,lib}/*.rs", "lib/x.rs", True),
    ("[!a]x", "bx", True),
    ("[!a]x", "ax", False),
    ("[a-c]?", "bz", True),
    ("?.c", "ab.c", False),
    ("*a*b*c", "xaybzc", True),
    ("*a*b*c", "xaybz", False),
    ("*ab*ab", "aab", False),
    ("a*a", "a", False),
    ("\\*x", "*x", True),
    ("\\*x", "ax", False),
    ("[z-a]", "[z-a]", True),
    ("a**b", "axxb", True),
    ("a**b", "ax/xb", False),
    ("x{a,b", "x{a,b", True),
]


@pytest.mark.parametrize(("glob", "path", "expected"), CASES)
def test_glob_semantics(glob: str, path: str, expected: bool) -> None:
    assert compile_glob(glob).match(path) is expected


@pytest.mark.parametrize("stars", [9, 14, 40])
def test_backtracking_patterns_are_answered(stars: int) -> None:
    """These took seconds to minutes as a backtracking regex; here they are instant."""
    glob = compile_glob("*a" * stars + "b")
    assert not glob.match("a" * 200)
    assert glob.match("a" * stars + "b")
    rule = parse_rule("*a" * stars + "b")
    assert rule is not None
    assert not rule.matches("x/" + "a" * 200, "a" * 200, False)


def test_brace_expansion_is_bounded() -> None:
    assert len(expand_braces("{a,b}" * 8)) == MAX_ALTERNATIVES
    with pytest.raises(GlobTooComplex):
        expand_braces("{a,b}" * 9)
    assert compile_glob("{a,b}" * 30).match("{a,b}" * 30)  # too complex: literal


def test_agrees_with_a_plain_regex_on_small_inputs() -> None:
    """Random globs of ``* ? a b /`` against random paths, checked against ``re``."""
    rng = random.Random(10)
    for _ in range(5000):
        glob = "/".join(_word(rng, "ab*?") for _ in range(rng.randint(1, 2)))
        path = "/".join(_word(rng, "ab") for _ in range(rng.randint(1, 3)))
        pattern = "".join({"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c)) for c in glob)
        assert compile_glob(glob).match(path) is bool(re.fullmatch(pattern, path)), (glob, path)


def _word(rng: random.Random, alphabet: str) -> str:
    word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5)))
    return re.sub(r"\*+", "*", word)
