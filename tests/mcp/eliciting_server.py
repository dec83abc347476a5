"""An MCP server that asks its client's user during its tool calls, written with the official
SDK: ``python eliciting_server.py [--http PORT]`` (stdio by default).

Tools: ``book_table`` (a form elicitation: a date, a party size, a seating choice, a vegan
flag; the answer is echoed as JSON), ``sign_in`` (a URL-mode elicitation; says whether the
user consented) and ``capabilities`` (the elicitation capability its client declared).
"""

from __future__ import annotations

import json
import sys
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
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


def main() -> None:
    args = sys.argv[1:]
    if "--http" in args:
        port = int(args[args.index("--http") + 1])
        app.run("streamable-http", host="127.0.0.1", port=port)
    else:
        app.run("stdio")


if __name__ == "__main__":
    main()
