"""``agentctl rpc METHOD [JSON]``: one raw JSON-RPC call, for exploring and scripting.

The result is printed as one JSON line on stdout; a JSON-RPC error as
``{"code":…,"message":…,"data"?:…}`` on stderr with exit code 2 (caller mistake) or 1.
Without a method it lists the methods. ``--events`` first prints every ``session/event``
that arrives during the call, one line each, as ``agentctl send --json`` does.
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from agentctl.common import UsageError, exit_code_for_exception, open_client, run_command
from agentctl.options import RpcOptions
from agentctl.run import outcome
from agentd.errors import RpcError
from agentd.protocol.table import METHODS


def parse_params(text: str | None) -> Any:
    """The params argument: a JSON object or array, or None when absent."""
    if text is None:
        return None
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise UsageError(f"params are not valid JSON: {exc}") from None
    if not isinstance(value, dict | list):
        raise UsageError("params must be a JSON object (or array)")
    return value


def rpc_main(options: RpcOptions) -> int:
    """Entry point of ``agentctl rpc``; without a method, the list of methods."""
    method = options.method
    if method is None:
        return list_methods()
    try:
        params = parse_params(options.params)
    except UsageError as exc:
        return exit_code_for_exception(exc)
    return run_command(lambda: _rpc(options, method, params))


def list_methods() -> int:
    """Print each method a client can call with its one-line description (exit 0)."""
    calls = {n: spec for n, spec in METHODS.items() if spec.direction == "client" and spec.rpc}
    width = max(map(len, calls))
    for name, spec in calls.items():
        sys.stdout.write(f"{name.ljust(width)}  {spec.doc.splitlines()[0]}\n")
    sys.stdout.write("\nagentctl rpc METHOD '{JSON params}'; the protocol: schemas/README.md\n")
    return outcome.OK


def _print_line(data: bytes) -> None:
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


async def _rpc(options: RpcOptions, method: str, params: Any) -> int:
    async with await open_client(options) as client:
        if options.events:
            client.on_notification(lambda method, data: _print_line(data))
        try:
            result = await client.call(method, params)
        except RpcError as exc:
            body: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                body["data"] = exc.data
            sys.stderr.buffer.write(msgspec.json.encode(body) + b"\n")
            sys.stderr.flush()
            return outcome.exit_code_for_rpc_error(exc.code)
    _print_line(msgspec.json.encode(result))
    return outcome.OK
