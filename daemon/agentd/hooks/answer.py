"""What a finished hook command answered (:func:`interpret`).

- exit 0: go on. A stdout that is one JSON object is read as a
  :class:`~agentd.protocol.hooks.HookOutput`: ``{"decision": "block", "reason": …}`` blocks,
  ``{"additionalContext": …}`` adds context; any other stdout is ignored. A stdout that
  starts like an object but is not a valid answer is an error (the run goes on).
- exit 2: block, stderr as the reason.
- any other exit, a signal, a timeout: an error (the run goes on, with a warning).
"""

from __future__ import annotations

import msgspec

from agentd.hooks.process import OUTPUT_CAP, HookRun
from agentd.protocol.events import HookDecision
from agentd.protocol.hooks import HookOutput

BLOCK_EXIT = 2
NO_REASON = "(the hook gave no reason)"
REASON_LIMIT = 4000
"""Characters of a block reason or an error text kept (the model reads a block reason)."""


class HookAnswer(msgspec.Struct, frozen=True):
    """One hook's answer: its decision, the reason (of a block, or what went wrong) and the
    context it added."""

    decision: HookDecision
    reason: str | None = None
    context: str | None = None


def interpret(run: HookRun, timeout: float) -> HookAnswer:
    """The answer of a hook that ran for at most ``timeout`` seconds (module docstring)."""
    cut = (
        f" (its {' and '.join(run.cut)} passed {OUTPUT_CAP // 1024} KiB and was cut)"
        if run.cut
        else ""
    )
    if run.timed_out:
        return HookAnswer("error", f"timed out after {timeout:g} s and was killed{cut}")
    if run.exit_code == BLOCK_EXIT:
        return HookAnswer("block", _limited(run.stderr.strip()) or NO_REASON)
    if run.exit_code != 0:
        how = "was killed by a signal" if run.exit_code is None else f"exited {run.exit_code}"
        said = run.stderr.strip()
        return HookAnswer("error", _limited(f"{how}{cut}" + (f": {said}" if said else "")))
    return _stdout_answer(run.stdout.strip(), cut)


def _stdout_answer(stdout: str, cut: str) -> HookAnswer:
    if not stdout.startswith("{"):
        return HookAnswer("allow")
    try:
        output = msgspec.json.decode(stdout, type=HookOutput)
    except msgspec.DecodeError as exc:
        return HookAnswer("error", f"printed JSON that is not a hook answer ({exc}){cut}")
    if output.decision == "block":
        return HookAnswer("block", _limited((output.reason or "").strip()) or NO_REASON)
    return HookAnswer("allow", context=output.additional_context or None)


def _limited(text: str) -> str:
    return text if len(text) <= REASON_LIMIT else text[:REASON_LIMIT] + " […]"
