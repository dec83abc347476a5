"""``agentctl batch report DIR``: the batch's summary (stdout) and its Markdown and HTML
reports (``DIR/report.md``, ``DIR/report.html``, or ``--markdown FILE`` / ``--html FILE``).

The summary: tasks and their statuses, pass rate, cost, tokens, duration percentiles (p50,
p90, max), failures by reason, and the file's bad lines (from ``batch.json``). ``--json``
prints the summary as one JSON object instead. Task ids, errors and paths come from the
model's reach (an error can quote it), so the HTML escapes them and the Markdown shows them
in code spans no text inside can close.
"""

from __future__ import annotations

import html
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from agentctl.batch.records import ResultRecord
from agentctl.batch.store import latest_records, read_batch_file, write_atomic
from agentctl.options import BatchOptions


@dataclass
class Summary:
    """What the report says about a batch."""

    records: list[ResultRecord]
    counts: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    cost: float = 0.0
    tokens: int = 0
    turns: int = 0
    durations_ms: list[int] = field(default_factory=list)
    invalid_lines: list[dict[str, Any]] = field(default_factory=list)
    batch_trace_id: str = ""

    @property
    def pass_rate(self) -> float:
        return self.counts.get("passed", 0) / len(self.records) if self.records else 0.0

    def percentile(self, fraction: float) -> int:
        """The duration (ms) below which ``fraction`` of the tasks finished (nearest rank)."""
        if not self.durations_ms:
            return 0
        ordered = sorted(self.durations_ms)
        rank = max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))
        return ordered[rank]

    def as_data(self) -> dict[str, Any]:
        return {
            "tasks": len(self.records),
            "counts": self.counts,
            "pass_rate": round(self.pass_rate, 4),
            "cost": round(self.cost, 6),
            "tokens": self.tokens,
            "turns": self.turns,
            "duration_ms": {
                "p50": self.percentile(0.5),
                "p90": self.percentile(0.9),
                "max": max(self.durations_ms, default=0),
            },
            "failures_by_reason": self.reasons,
            "invalid_lines": self.invalid_lines,
            "batch_trace_id": self.batch_trace_id,
        }


def failure_reason(record: ResultRecord) -> str:
    """How a task that did not pass is grouped: its status, with the check's exit code or
    the run's stop reason."""
    if record.status == "failed":
        return f"check exited {record.check_exit_code}"
    if record.status == "error" and record.error:
        return f"error: {record.error.split(':', 1)[0]}"
    return record.status


def summarise(out_dir: Path) -> Summary:
    """The summary of ``out_dir``'s latest record per task."""
    records = sorted(latest_records(out_dir).values(), key=lambda record: record.id)
    summary = Summary(records=records)
    batch = read_batch_file(out_dir)
    if batch is not None:
        summary.invalid_lines = batch.invalid_lines
        summary.batch_trace_id = batch.batch_trace_id
    for record in records:
        summary.counts[record.status] = summary.counts.get(record.status, 0) + 1
        summary.cost += record.cost
        summary.tokens += record.usage.total
        summary.turns += record.turns
        summary.durations_ms.append(record.duration_ms)
        if record.status != "passed":
            reason = failure_reason(record)
            summary.reasons[reason] = summary.reasons.get(reason, 0) + 1
    return summary


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f}s"


def text_table(summary: Summary) -> str:
    """The summary as aligned text lines."""
    data = summary.as_data()
    rows = [
        ("tasks", str(data["tasks"])),
        *((f"  {status}", str(n)) for status, n in sorted(summary.counts.items())),
        ("pass rate", f"{100 * summary.pass_rate:.1f}%"),
        ("cost", f"${summary.cost:.4f}"),
        ("tokens", str(summary.tokens)),
        ("turns", str(summary.turns)),
        ("time p50 / p90 / max", " / ".join(_seconds(v) for v in data["duration_ms"].values())),
    ]
    if summary.reasons:
        rows.append(("failures by reason", ""))
        rows.extend((f"  {reason}", str(n)) for reason, n in sorted(summary.reasons.items()))
    if summary.invalid_lines:
        rows.append(("bad lines", str(len(summary.invalid_lines))))
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label.ljust(width)}  {value}".rstrip() for label, value in rows) + "\n"


def _code(text: str) -> str:
    """``text`` in a Markdown code span no backtick run inside can close."""
    text = text.replace("\n", " ").replace("|", "\\|")
    longest = 0
    current = 0
    for char in text:
        current = current + 1 if char == "`" else 0
        longest = max(longest, current)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


def markdown_report(summary: Summary) -> str:
    """The report as Markdown: the summary table, then a row per task."""
    lines = ["# Batch report", "", "| | |", "|---|---|"]
    lines += [f"| {label.strip()} | {value} |" for label, value in _pairs(summary)]
    lines += ["", "| task | status | turns | check | cost | time | files | error |",
              "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for record in summary.records:
        check = "" if record.check_exit_code is None else str(record.check_exit_code)
        error = _code(record.error) if record.error else ""
        lines.append(
            f"| {_code(record.id)} | {record.status} | {record.turns} | {check} | "
            f"${record.cost:.4f} | {_seconds(record.duration_ms)} | "
            f"{len(record.files_changed)} | {error} |"
        )
    return "\n".join(lines) + "\n"


def _pairs(summary: Summary) -> list[tuple[str, str]]:
    return [tuple(line.split("  ", 1)) if "  " in line else (line, "")  # type: ignore[misc]
            for line in text_table(summary).splitlines()]  # fmt: skip


def _cells(record: ResultRecord) -> tuple[object, ...]:
    check = "" if record.check_exit_code is None else record.check_exit_code
    return (
        record.id, record.status, record.turns, check, f"${record.cost:.4f}",
        _seconds(record.duration_ms), len(record.files_changed), record.error or "",
    )  # fmt: skip


def html_report(summary: Summary) -> str:
    """The report as a standalone HTML page (every value escaped)."""
    esc = html.escape
    head = "".join(
        f"<tr><th>{esc(label.strip())}</th><td>{esc(value.strip())}</td></tr>"
        for label, value in _pairs(summary)
    )
    rows = "".join(
        "<tr>" + "".join(f"<td>{esc(str(cell))}</td>" for cell in _cells(record)) + "</tr>"
        for record in summary.records
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>Batch report</title>'
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style></head><body>"
        f"<h1>Batch report</h1><table>{head}</table><h2>Tasks</h2><table><tr><th>task</th>"
        "<th>status</th><th>turns</th><th>check</th><th>cost</th><th>time</th><th>files</th>"
        f"<th>error</th></tr>{rows}</table></body></html>\n"
    )


def report_main(out_dir: Path, options: BatchOptions) -> int:
    """``agentctl batch report DIR``: 0, or 2 when DIR holds no batch."""
    if not (out_dir / "results.jsonl").exists() and not (out_dir / "batch.json").exists():
        sys.stderr.write(f"agentctl batch report: {out_dir}: no batch here (no results.jsonl)\n")
        return 2
    summary = summarise(out_dir)
    markdown = Path(options.markdown) if options.markdown else out_dir / "report.md"
    page = Path(options.html) if options.html else out_dir / "report.html"
    write_atomic(markdown, markdown_report(summary).encode())
    write_atomic(page, html_report(summary).encode())
    if options.json:
        sys.stdout.buffer.write(msgspec.json.encode(summary.as_data()) + b"\n")
    else:
        sys.stdout.write(text_table(summary))
        sys.stdout.write(f"reports: {markdown} {page}\n")
    return 0
