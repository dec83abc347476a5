"""Code actions: ``agentd.prompt`` offered where the editor's cursor or selection is.

- one quickfix ``Fix with agentd: <message>`` per diagnostic of the range, whose prompt
  quotes the diagnostic and its code;
- for a non-empty selection, three refactor actions: explain, refactor, write tests.

Cheap: building them reads the open document only; no model is called until the editor
runs the command. When the editor resolves code actions lazily (``resolveSupport`` naming
``command``), the actions carry their prompt in ``data`` and ``codeAction/resolve`` fills the
command; otherwise the command comes with the action. Plain JSON values throughout.
"""

from __future__ import annotations

from typing import Any

from agentd.lsp.edits import offset_at

QUOTED = 4000
"""Characters of code a prompt quotes at most."""

SELECTION_ACTIONS = (
    ("refactor", "Ask agentd to explain this", "Explain what this code does and why."),
    (
        "refactor.rewrite",
        "Ask agentd to refactor this",
        "Refactor this code: keep its behaviour, make it clearer and simpler, and edit the file.",
    ),
    (
        "refactor",
        "Ask agentd to write tests for this",
        "Write tests for this code, following the project's conventions.",
    ),
)
"""Kind, title and request of each action offered for a selection."""


def code_actions(
    uri: str,
    path: str,
    text: str | None,
    range_: dict[str, Any],
    diagnostics: list[dict[str, Any]],
    *,
    only: list[str] | None,
    lazy: bool,
    encoding: str,
) -> list[dict[str, Any]]:
    """The actions for ``range_`` of the document ``uri`` (its text ``text`` when open)."""
    actions: list[dict[str, Any]] = []
    if _wanted("quickfix", only):
        for diagnostic in diagnostics:
            message = str(diagnostic.get("message", "")).strip()
            first_line = message.splitlines()[0] if message else "problem"
            prompt = _fix_prompt(path, text, diagnostic, encoding)
            action = _action(f"Fix with agentd: {first_line}", "quickfix", uri, prompt, range_)
            action["diagnostics"] = [diagnostic]
            actions.append(action)
    start, end = range_["start"], range_["end"]
    if (start["line"], start["character"]) != (end["line"], end["character"]):
        code = _code(text, range_, encoding)
        for kind, title, request in SELECTION_ACTIONS:
            if _wanted(kind, only):
                prompt = f"{request}\n\nIn {path}:\n```\n{code}\n```" if code else request
                actions.append(_action(title, kind, uri, prompt, range_))
    if not lazy:
        for action in actions:
            resolve(action)
    return actions


def resolve(action: dict[str, Any]) -> dict[str, Any]:
    """Fill the command of an action made by :func:`code_actions` (from its ``data``)."""
    data = action.get("data")
    if isinstance(data, dict) and "prompt" in data:
        argument = {key: data[key] for key in ("prompt", "uri", "range") if key in data}
        action["command"] = {
            "title": action.get("title", "agentd"),
            "command": "agentd.prompt",
            "arguments": [argument],
        }
    return action


def _action(title: str, kind: str, uri: str, prompt: str, range_: dict[str, Any]) -> dict[str, Any]:
    data = {"prompt": prompt, "uri": uri, "range": range_}
    return {"title": title, "kind": kind, "data": data}


def _wanted(kind: str, only: list[str] | None) -> bool:
    """Whether the editor asked for ``kind`` (``only`` holds kinds and their parents)."""
    return only is None or any(kind == o or kind.startswith(o + ".") for o in only)


def _fix_prompt(path: str, text: str | None, diagnostic: dict[str, Any], encoding: str) -> str:
    where = diagnostic.get("range") or {"start": {"line": 0, "character": 0}}
    line = where["start"]["line"] + 1
    source = diagnostic.get("source")
    origin = f" ({source})" if source else ""
    message = str(diagnostic.get("message", "")).strip()
    prompt = f"Fix this problem reported at {path}:{line}{origin}:\n\n{message}"
    code = _code(text, _whole_lines(where), encoding)
    return f"{prompt}\n\nThe code:\n```\n{code}\n```" if code else prompt


def _whole_lines(range_: dict[str, Any]) -> dict[str, Any]:
    """The lines ``range_`` touches, whole."""
    return {
        "start": {"line": range_["start"]["line"], "character": 0},
        "end": {"line": range_.get("end", range_["start"])["line"] + 1, "character": 0},
    }


def _code(text: str | None, range_: dict[str, Any], encoding: str) -> str:
    if text is None:
        return ""
    start, end = range_["start"], range_["end"]
    first = offset_at(text, start["line"], start["character"], encoding)
    last = offset_at(text, end["line"], end["character"], encoding)
    code = text[first:last].rstrip("\n")
    return code if len(code) <= QUOTED else code[:QUOTED] + "\n…"
