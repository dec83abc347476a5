"""A small shell-command splitter for the danger check and permission rules.

It is not a shell parser: it tokenizes with :mod:`shlex` (quotes removed, operators split
out) and cuts the tokens into *segments*, the simple commands of a pipeline or list, at
``;``, ``&``, ``&&``, ``|``, ``||``, newlines, parentheses, ``$(``, ``<(`` and backticks.
Redirections stay inside their segment. Leading wrappers (``sudo``, ``env``, ``nohup``,
``time``, ``timeout``, ``nice``, ``exec``, ``command``, ``xargs``, variable assignments) can be
peeled off with :func:`strip_wrappers` to find the command that really runs.
"""

from __future__ import annotations

import re
import shlex

_OPERATOR_CHARS = "();<>|&\n"
_SEPARATOR_CHARS = frozenset("();|&\n")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_FALLBACK_TOKEN = re.compile(r"[();|&\n]+|[<>]+&?|[^\s();|&<>]+")
_WRAPPERS = frozenset({"nohup", "time", "command", "exec", "builtin", "stdbuf", "ionice"})
_SUDO_ARG_OPTIONS = frozenset({"-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D"})
_PEELED = _WRAPPERS | {"sudo", "doas", "env", "xargs", "nice", "timeout"}


def tokens(command: str) -> list[str]:
    """Shell words and operators of ``command`` (quotes removed).

    Unbalanced quotes fall back to a plain split on whitespace and operators.
    """
    text = command.replace("\\\n", " ").replace("`", " ; ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return _FALLBACK_TOKEN.findall(text)


def is_separator(token: str) -> bool:
    """True for tokens that end a simple command (``;``, ``&&``, ``|``, ``(``, ``$(``…)."""
    if token.endswith("(") and set(token[:-1]) <= set("$<>"):
        return True
    return bool(token) and set(token) <= _SEPARATOR_CHARS


def segments(command: str) -> list[list[str]]:
    """The simple commands of ``command``, each as its token list (empty ones dropped)."""
    result: list[list[str]] = []
    current: list[str] = []
    for token in tokens(command):
        if is_separator(token) or token == "$":
            if current:
                result.append(current)
            current = []
        else:
            current.append(token)
    if current:
        result.append(current)
    return result


def command_name(token: str) -> str:
    """The program name of a command word (``/usr/bin/rm`` → ``rm``)."""
    return token.rsplit("/", 1)[-1]


def strip_wrappers(words: list[str]) -> list[str]:
    """``words`` without leading assignments and wrapper commands (``sudo -u x env A=1 rm``
    → ``rm``); returns an empty list when only wrappers remain."""
    if words and "=" not in words[0] and command_name(words[0]) not in _PEELED:
        return words  # the common case: nothing to peel
    index = 0
    while index < len(words):
        word = words[index]
        name = command_name(word)
        if _ASSIGNMENT.match(word):
            index += 1
        elif name in ("sudo", "doas"):
            index = _skip_options(words, index + 1, _SUDO_ARG_OPTIONS)
        elif name in ("env", "xargs") or name in _WRAPPERS:
            index = _skip_options(words, index + 1, frozenset({"-u", "-n", "-I", "-P", "-c"}))
        elif name == "nice":
            index = _skip_options(words, index + 1, frozenset({"-n"}))
        elif name == "timeout":
            index = _skip_options(words, index + 1, frozenset({"-s", "-k"})) + 1
        else:
            break
    return words[index:]


def _skip_options(words: list[str], index: int, takes_argument: frozenset[str]) -> int:
    while index < len(words) and words[index].startswith("-"):
        if words[index] == "--":
            return index + 1
        index += 2 if words[index] in takes_argument else 1
    return index
