"""Reports of one ``agentctl send`` run for CI: the JSON result file and a Markdown summary.

``--result-file PATH`` gets the ``result`` line of ``--json`` (one JSON object and a newline),
whatever the output mode, so a CI step can keep stdout for logs. ``--summary-file PATH`` gets
a Markdown summary suited to ``$GITHUB_STEP_SUMMARY`` (appended, as GitHub expects): the
prompt, the final answer, the tools used, the files changed, turns, tokens, cost and how the
run ended.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from agentctl.outcome import RunSummary
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
            f"### agentd: {summary.stop_reason} (exit {summary.exit_code})",
            "",
            "| | |",
            "|---|---|",
            f"| Session | `{summary.session_id}` |",
            f"| Turns | {summary.turns} |",
            f"| Tokens | {tokens:,} (input {usage.get('inputTokens', 0):,}, "
            f"output {usage.get('outputTokens', 0):,}) |",
            f"| Cost | ${summary.cost:.4f} |",
            f"| Duration | {summary.duration_ms / 1000:.1f} s |",
        ]
        if summary.error:
            lines.append(f"| Error | {_cell(summary.error)} |")
        lines += ["", "**Prompt**", "", _quote(self.prompt), ""]
        if self.final_text:
            lines += ["**Answer**", "", _quote(self.final_text), ""]
        if self.tools:
            used = ", ".join(f"`{name}` ×{count}" for name, count in sorted(self.tools.items()))
            lines += [f"**Tools:** {used}", ""]
        changed = ", ".join(f"`{path}`" for path in self.files) or "none"
        lines += [f"**Files changed:** {changed}", ""]
        return "\n".join(lines) + "\n"

    def write(self, summary: RunSummary, result_file: str | None, summary_file: str | None) -> None:
        """Write the result line and/or append the summary."""
        if result_file:
            write_result_file(result_file, summary.result_line())
        if summary_file:
            with Path(summary_file).open("a", encoding="utf-8") as out:
                out.write(self.markdown(summary))


def write_result_file(path: str, line: dict[str, Any]) -> None:
    """Write one result line (replacing the file)."""
    Path(path).write_bytes(msgspec.json.encode(line) + b"\n")


def _quote(text: str) -> str:
    if len(text) > _QUOTE_LIMIT:
        text = text[:_QUOTE_LIMIT] + "\n…"
    return "\n".join("> " + line if line else ">" for line in text.splitlines())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
