"""Reports of one ``agentctl send`` run for CI: the JSON result file and a Markdown summary.

``--result-file PATH`` gets the ``result`` line of ``--json`` (one JSON object and a newline),
whatever the output mode, so a CI step can keep stdout for logs. ``--summary-file PATH`` gets
a Markdown summary suited to ``$GITHUB_STEP_SUMMARY`` (appended, as GitHub expects): the
prompt, the final answer, the tools used, the files changed, turns, tokens, cost and how the
run ended.

The summary is rendered by GitHub as Markdown with HTML, and what the model wrote (its answer,
file names, tool names, errors) is not to be trusted: the prompt and the answer are shown
verbatim in fenced code blocks (a fence longer than any backtick run inside), names in code
spans sized the same way, other text with every Markdown and HTML character escaped — so no
raw HTML (image beacons), no images, no links and no broken-out code spans reach the page.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from agentctl.run.outcome import RunSummary
from agentd.protocol.content import AssistantMessage
from agentd.protocol.events import Event, MessageEnd, ToolExecutionEnd, ToolExecutionStart

FILE_TOOLS = frozenset({"write", "edit", "undo_edit"})
"""Tools whose ``path`` argument names a file the run changed (when the call succeeded)."""
_QUOTE_LIMIT = 4000


class RunReport:
    """Observes a run's events; writes the files the flags ask for."""

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt
        self.final_text = ""
        self.tools: Counter[str] = Counter()
        self.files: dict[str, None] = {}
        self._paths: dict[str, str] = {}

    def observe(self, event: Event) -> None:
        """Take what the reports need from one event."""
        if isinstance(event, ToolExecutionStart):
            self.tools[event.name] += 1
            path = event.args.get("path") if isinstance(event.args, dict) else None
            if event.name in FILE_TOOLS and isinstance(path, str):
                self._paths[event.tool_call_id] = path
        elif isinstance(event, ToolExecutionEnd):
            path = self._paths.pop(event.tool_call_id, None)
            if path is not None and not event.is_error:
                self.files[path] = None
        elif isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            text = event.message.text()
            if text.strip():
                self.final_text = text

    def markdown(self, summary: RunSummary) -> str:
        """The step summary."""
        usage = summary.usage
        tokens = sum(v for k, v in usage.items() if k.endswith("Tokens") and isinstance(v, int))
        lines = [
            f"### agentd: {summary.reported_stop_reason} (exit {summary.exit_code})",
            "",
            "| | |",
            "|---|---|",
            f"| Session | {_code_cell(summary.session_id)} |",
            f"| Turns | {summary.turns} |",
            f"| Tokens | {tokens:,} (input {usage.get('inputTokens', 0):,}, "
            f"output {usage.get('outputTokens', 0):,}) |",
            f"| Cost | ${summary.rounded_cost:.6f} |",
            f"| Duration | {summary.duration_ms / 1000:.1f} s |",
        ]
        if summary.error:
            lines.append(f"| Error | {_escaped(summary.error)} |")
        lines += ["", "**Prompt**", "", _fenced(self.prompt), ""]
        if self.final_text:
            lines += ["**Answer**", "", _fenced(self.final_text), ""]
        if self.tools:
            tools = sorted(self.tools.items())
            used = ", ".join(f"{_code(name)} ×{count}" for name, count in tools)
            lines += [f"**Tools:** {used}", ""]
        changed = ", ".join(_code(path) for path in self.files) or "none"
        lines += [f"**Files changed:** {changed}", ""]
        return "\n".join(lines) + "\n"

    def write(self, summary: RunSummary, result_file: str | None, summary_file: str | None) -> None:
        """Write the result line and/or append the summary."""
        if result_file:
            write_result_file(result_file, summary.result_line())
        if summary_file:
            with Path(summary_file).open("a", encoding="utf-8") as out:
                out.write(self.markdown(summary))


def write_failure_summary(path: str, prompt: str, message: str, exit_code: int) -> None:
    """Append the summary of a run that could not start: the error and what to set."""
    lines = [
        f"### agentd: could not start (exit {exit_code})",
        "",
        f"**Error:** {_escaped(message)}",
        "",
    ]
    hints = setup_hints(message)
    if hints:
        lines += ["**What to set:**", "", *(f"- {hint}" for hint in hints), ""]
    lines += ["**Prompt**", "", _fenced(prompt), ""]
    with Path(path).open("a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def setup_hints(message: str) -> list[str]:
    """What to set for a run that could not start, from its error (Action inputs first: the
    summary is read in CI). Plain Markdown of our own: nothing of ``message`` is echoed."""
    hints = []
    if "no LLM provider" in message or "API key" in message or "api key" in message:
        hints.append(
            "a provider: the Action's `api-key` input (a secret) with `provider` "
            "(`openai` or `anthropic`), or `base-url` and `model` for an OpenAI-compatible "
            "server; outside the Action, the environment variables named in the error"
        )
    if "cost cap" in message:
        hints.append(
            "a token cap instead of a cost cap (the Action's `max-tokens` input, "
            "`agentctl send --max-tokens`), or the model's prices in the config file"
        )
    if "config file" in message:
        hints.append("a valid configuration file: the key and file named in the error")
    return hints


def write_result_file(path: str, line: dict[str, Any]) -> None:
    """Write one result line (replacing the file)."""
    Path(path).write_bytes(msgspec.json.encode(line) + b"\n")


_BACKTICKS = re.compile(r"`+")
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|~:])")


def _fence_for(text: str, least: int) -> str:
    """A run of backticks longer than any in ``text`` (at least ``least``)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(least, longest + 1)


def _fenced(text: str) -> str:
    """``text`` (cut at the quote limit) as a fenced code block: shown verbatim."""
    if len(text) > _QUOTE_LIMIT:
        text = text[:_QUOTE_LIMIT] + "\n…"
    fence = _fence_for(text, 3)
    return f"{fence}text\n{text}\n{fence}"


def _code(text: str) -> str:
    """``text`` on one line as a code span that nothing in it can close."""
    flat = " ".join(text.splitlines()) or " "
    fence = _fence_for(flat, 1)
    pad = " " if flat[0] == "`" or flat[-1] == "`" else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _escaped(text: str) -> str:
    """``text`` on one line with HTML and Markdown characters escaped: plain text on the page."""
    flat = " ".join(text.splitlines())
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", flat)


def _code_cell(text: str) -> str:
    """``text`` as a code span in a table cell (pipes escaped, as GFM tables need)."""
    return _code(text).replace("|", "\\|")
