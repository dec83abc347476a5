"""An MCP server that asks its client's user during its tool calls, written with the official
SDK: ``python eliciting_server.py [--http PORT]`` (stdio by default).

Tools: ``book_table`` (a form elicitation: a date, a party size, a seating choice, a vegan
flag; the answer is echoed as JSON), ``sign_in`` (a URL-mode elicitation; says whether the
user consented), ``capabilities`` (the elicitation capability its client declared) and
``pick_colour`` (waits until a second call of it runs, so that two calls ask at once; its
request names the call's progress token in ``_meta`` unless ``cite_call`` is false).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.message import ServerMessageMetadata
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult
from pydantic import BaseModel, Field

app = MCPServer("elicitor")


class Booking(BaseModel):
    """The form of ``book_table``."""

    date: str = Field(description="the day, YYYY-MM-DD")
    party: int = Field(description="how many people")
    seating: Literal["inside", "terrace"] = Field(description="where to sit")
    vegan: bool = Field(default=False, description="vegan menu")


@app.tool()
async def book_table(restaurant: str, ctx: Context) -> str:
    """Book a table, asking the user for the details."""
    answer = await ctx.elicit(f"Booking at {restaurant}: the details?", Booking)
    if answer.action != "accept":
        return f"not booked ({answer.action})"
    return "booked " + json.dumps(answer.data.model_dump(), sort_keys=True)


@app.tool()
async def sign_in(ctx: Context) -> str:
    """Ask the user to sign in on a web page."""
    answer = await ctx.elicit_url(
        "Sign in to the example service", "https://auth.example.test/login?code=42", "login-1"
    )
    return f"sign-in {answer.action}"


@app.tool()
def capabilities(ctx: Context) -> str:
    """The elicitation capability the client declared."""
    declared = ctx.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    if elicitation is None:
        return "none"
    return json.dumps(elicitation.model_dump(exclude_none=True), sort_keys=True)


class Colour(BaseModel):
    """The form of ``pick_colour``."""

    colour: Literal["red", "blue", "green"] = Field(description="a colour")


_running: list[asyncio.Event] = []
"""One event per ``pick_colour`` call waiting for a partner (set when a second one comes)."""


async def _with_partner(seconds: float = 120.0) -> None:
    """Return once another ``pick_colour`` call runs too (pairs are formed in turn)."""
    if _running:
        _running.pop().set()
        return
    partner = asyncio.Event()
    _running.append(partner)
    await asyncio.wait_for(partner.wait(), seconds)


@app.tool()
async def pick_colour(who: str, ctx: Context, cite_call: bool = True) -> str:
    """Ask the user for a colour, once a second call of this tool runs too."""
    await _with_partner()
    token = (ctx.request_context.meta or {}).get("progress_token")  # the SDK's key
    meta = {"progressToken": token} if cite_call and token is not None else None
    params = ElicitRequestFormParams(
        message=f"A colour for {who}?",
        requested_schema=Colour.model_json_schema(),
        _meta=meta,
    )
    answer = await ctx.request_context.session.send_request(
        ElicitRequest(params=params),
        ElicitResult,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )
    picked = (answer.content or {}).get("colour")
    return f"{who}: {answer.action}" + (f" {picked}" if picked else "")


def main() -> None:
    args = sys.argv[1:]
    if "--http" in args:
        port = int(args[args.index("--http") + 1])
        app.run("streamable-http", host="127.0.0.1", port=port)
    else:
        app.run("stdio")


if __name__ == "__main__":
    main()
