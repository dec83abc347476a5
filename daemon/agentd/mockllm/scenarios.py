"""Scenario files: what the mock model answers, and how a request picks its answer.

A request is matched against the scenarios in file order: the first whose ``trigger`` occurs
in the last user message (case-insensitive) answers; none matching gives
``default_response``. The step answered is the number of tool results after that user
message: step 0 first, step 1 once one tool result came back, and so on. Past the last step
the last step's text is repeated without its tool calls (so a conversation always ends),
unless the scenario has ``"repeat": true``, which loops over the steps forever.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

NonNegative = Annotated[int, msgspec.Meta(ge=0)]


class ScenarioError(Exception):
    """A scenarios file that cannot be read or does not have the documented shape."""


class FunctionSpec(msgspec.Struct, forbid_unknown_fields=True):
    """A tool call's function. ``arguments`` is sent as given: any string, even invalid JSON."""

    name: str
    arguments: str = "{}"


class ToolCallSpec(msgspec.Struct, forbid_unknown_fields=True):
    """A tool call in the OpenAI shape."""

    id: str
    function: FunctionSpec
    type: str = "function"


class SearchResultSpec(msgspec.Struct, forbid_unknown_fields=True):
    """One result of a provider-side search."""

    url: str
    title: str = ""
    snippet: str = ""


class ServerSearchSpec(msgspec.Struct, forbid_unknown_fields=True):
    """A search the provider runs on its side before the reply's text (only when the request
    offers its web search tool): the ``query``, its ``results`` (the request's domain filters
    apply), or an ``error`` code (``max_uses_exceeded``, ``too_many_requests``…)."""

    query: str
    results: list[SearchResultSpec] = msgspec.field(default_factory=list)
    error: str | None = None


class CitationSpec(msgspec.Struct, forbid_unknown_fields=True):
    """A source the reply's text cites (``cited_text`` should occur in the text)."""

    url: str
    title: str = ""
    cited_text: str = ""


class ResponseSpec(msgspec.Struct, forbid_unknown_fields=True):
    """One reply: text (``content`` repeated ``content_repeat`` times), tool calls, reasoning.

    ``stop`` ends the reply as cut by the output token limit (``length``) or refused by the
    model (``refusal``: Anthropic's ``refusal``, OpenAI's ``content_filter``).
    ``server_searches`` and ``citations``: the provider's own web search (Anthropic and
    Responses formats), sent only when the request offers that tool."""

    content: str = ""
    tool_calls: list[ToolCallSpec] = msgspec.field(default_factory=list)
    reasoning: str = ""
    content_repeat: Annotated[int, msgspec.Meta(ge=1)] = 1
    stop: Literal["length", "refusal"] | None = None
    server_searches: list[ServerSearchSpec] = msgspec.field(default_factory=list)
    citations: list[CitationSpec] = msgspec.field(default_factory=list)

    @property
    def text(self) -> str:
        """The full reply text."""
        return self.content * self.content_repeat


class UsageSpec(msgspec.Struct, forbid_unknown_fields=True):
    """Token counts reported instead of the estimate (len(text) // 4)."""

    input_tokens: NonNegative | None = None
    output_tokens: NonNegative | None = None
    cache_read_tokens: NonNegative = 0
    cache_write_tokens: NonNegative = 0


class StepSpec(msgspec.Struct, forbid_unknown_fields=True):
    """One step of a scenario, with the timing and failure knobs used by tests."""

    response: ResponseSpec
    delay_ms: NonNegative = 0
    chunk_delay_ms: NonNegative = 0
    chunk_size: Annotated[int, msgspec.Meta(ge=1)] | None = None
    truncate: bool = False
    usage: UsageSpec | None = None


class FailureSpec(msgspec.Struct, forbid_unknown_fields=True):
    """An HTTP error answered instead of a reply (``forever``: for every later request too)."""

    status: Annotated[int, msgspec.Meta(ge=400, le=599)] = 500
    retry_after: float | None = None
    message: str | None = None
    code: str | None = None
    forever: bool = False


class Scenario(msgspec.Struct, forbid_unknown_fields=True):
    """A named conversation script."""

    name: str
    trigger: str
    steps: Annotated[list[StepSpec], msgspec.Meta(min_length=1)]
    repeat: bool = False
    fail: list[FailureSpec] = msgspec.field(default_factory=list)


class Scenarios(msgspec.Struct, forbid_unknown_fields=True):
    """A whole scenarios file."""

    scenarios: list[Scenario] = msgspec.field(default_factory=list)
    default_response: ResponseSpec = msgspec.field(
        default_factory=lambda: ResponseSpec(content="I am the agentd mock model.")
    )


class SearchOffer(msgspec.Struct, frozen=True):
    """The provider-side web search a request offers, with its limits."""

    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    max_uses: int | None = None
    sources: bool = True


class Conversation(msgspec.Struct, frozen=True):
    """What the mock reads from a request, in either wire format (``search``: the
    provider-side web search it offers, None for none)."""

    last_user_text: str
    tool_results: int
    model: str
    stream: bool
    search: SearchOffer | None = None


BUILT_IN = Path(__file__).with_name("scenarios.json")
"""The scenarios shipped with agentd (package data, next to this module)."""


def load_scenarios(path: Path | None = None) -> Scenarios:
    """Read a scenarios file; ``None`` reads the one shipped with agentd."""
    try:
        data = BUILT_IN.read_bytes() if path is None else path.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"cannot read scenarios file {path}: {exc.strerror or exc}") from exc
    return parse_scenarios(data, str(path or "scenarios.json"))


def parse_scenarios(data: bytes | str | dict[str, Any], source: str = "scenarios") -> Scenarios:
    """Decode and validate scenarios from JSON text or an already decoded object."""
    try:
        if isinstance(data, dict):
            scenarios = msgspec.convert(data, Scenarios)
        else:
            scenarios = msgspec.json.decode(data, type=Scenarios)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ScenarioError(f"{source}: {exc}") from exc
    return scenarios


def match(scenarios: Scenarios, conversation: Conversation) -> Scenario | None:
    """The first scenario whose trigger occurs in the last user message."""
    text = conversation.last_user_text.casefold()
    for scenario in scenarios.scenarios:
        if scenario.trigger.casefold() in text:
            return scenario
    return None


def step_for(scenario: Scenario, tool_results: int) -> StepSpec:
    """The step answering after ``tool_results`` tool results (see the module docstring)."""
    steps = scenario.steps
    if scenario.repeat:
        return steps[tool_results % len(steps)]
    if tool_results < len(steps):
        return steps[tool_results]
    last = steps[-1]
    return msgspec.structs.replace(last, response=ResponseSpec(content=last.response.text))
