"""Connection over a real socket pair: dispatch, errors, cancellation, closing."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec
import pytest

from agentd.errors import (
    ConnectionLost,
    InvalidParams,
    MethodNotFound,
    NotInitialized,
    PeerTimeout,
    RequestCancelled,
    SessionBusy,
)
from agentd.protocol.base import Params, Wire
from agentd.rpc import Connection, Router, context
from agentd.rpc.framing import CONTENT_LENGTH
from tests.harness import scaled, wait_until_async
from tests.rpc.helpers import connection_pair, raw_pair


class AddParams(Params):
    a: int
    b: int = 0


class Sum(Wire):
    total: int


async def add(conn: Connection, params: AddParams) -> Sum:
    return Sum(total=params.a + params.b)


def echo_router() -> Router:
    router = Router()
    router.add("add", add, AddParams)

    async def echo(conn: Connection, params: Any) -> Any:
        return params

    router.add("echo", echo, Any)
    return router


async def test_request_decodes_params_and_encodes_the_result_struct() -> None:
    """Params arrive as the declared Struct; a Struct result reaches the caller."""
    async with connection_pair(echo_router()) as (_server, client):
        assert await client.request("add", {"a": 2, "b": 3}, result_type=Sum) == Sum(total=5)
        assert await client.request("echo", [1, "x", None]) == [1, "x", None]


async def test_missing_params_use_defaults_or_name_the_required_field() -> None:
    """Absent params mean ``{}``: defaults apply, a required field gives -32602 naming it."""
    router = echo_router()

    async def defaults(conn: Connection, params: AddParams) -> int:
        return params.b

    async with connection_pair(router) as (_server, client):
        with pytest.raises(InvalidParams, match="`a`"):
            await client.request("add")
        with pytest.raises(InvalidParams, match=r"Expected `int`, got `str` - at `\$.b`"):
            await client.request("add", {"a": 1, "b": "two"})
        with pytest.raises(InvalidParams, match="unknown field `c`"):
            await client.request("add", {"a": 1, "c": 1})


async def test_unknown_method_and_rpc_errors_keep_code_message_and_data() -> None:
    """-32601 for unknown methods; a handler's RpcError reaches the caller as the same class."""
    router = Router()

    async def busy(conn: Connection, params: Any) -> None:
        raise SessionBusy("a run is in progress", {"sessionId": "s1"})

    router.add("busy", busy, Any)
    async with connection_pair(router) as (_server, client):
        with pytest.raises(MethodNotFound, match="unknown method: nope"):
            await client.request("nope")
        with pytest.raises(SessionBusy) as caught:
            await client.request("busy")
        assert caught.value.data == {"sessionId": "s1"}


async def test_unexpected_exception_is_an_internal_error_without_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """-32603 names the request id; the traceback goes only to the log."""
    router = Router()

    async def broken(conn: Connection, params: Any) -> None:
        raise ValueError("secret internals")

    router.add("broken", broken, Any)
    async with raw_pair(router) as (_server, peer):
        with caplog.at_level(logging.ERROR, logger="agentd.rpc"):
            await peer.send_json({"jsonrpc": "2.0", "id": 41, "method": "broken"})
            reply = await peer.read()
    assert reply["error"]["code"] == -32603
    assert "41" in reply["error"]["message"]
    assert "secret" not in reply["error"]["message"]
    assert "data" not in reply["error"]
    assert "Traceback" not in str(reply)
    failed = [record for record in caplog.records if record.exc_info]
    assert failed
    assert "secret internals" in str(failed[0].exc_info[1])


async def test_ids_are_echoed_exactly_and_null_results_are_kept() -> None:
    """String, float and huge integer ids come back byte for byte; ``result: null`` stays."""
    router = Router()

    async def nothing(conn: Connection, params: Any) -> None:
        return None

    router.add("nothing", nothing, Any)
    async with raw_pair(router) as (_server, peer):
        for raw_id in (b'"abc"', b"1.5", b"123456789012345678901234567890", b"-4", b"null"):
            await peer.send(b'{"jsonrpc":"2.0","id":%b,"method":"nothing"}\n' % raw_id)
            assert await peer.read_raw() == b'{"jsonrpc":"2.0","id":%b,"result":null}' % raw_id


async def test_content_length_is_detected_and_answered_in_kind() -> None:
    """A Content-Length client gets Content-Length replies."""
    async with raw_pair(echo_router()) as (server, peer):
        peer.framing = CONTENT_LENGTH
        await peer.send_json({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": "é"})
        assert await peer.read() == {"jsonrpc": "2.0", "id": 1, "result": "é"}
        assert server.framing == CONTENT_LENGTH


async def test_garbage_batches_and_bad_envelopes_leave_the_connection_usable() -> None:
    """-32700 and -32600 answers carry ``id: null``; the next request is answered."""
    async with raw_pair(echo_router()) as (_server, peer):
        await peer.send(b'{"jsonrpc":"2.0","id":0,"method":"echo"}\n')
        assert (await peer.read())["id"] == 0
        await peer.send(b"not json\n")
        assert (await peer.read())["error"]["code"] == -32700
        await peer.send(b'[{"jsonrpc":"2.0","id":1,"method":"echo"}]\n')
        assert await peer.read() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "batch requests are not supported"},
        }
        await peer.send(b'{"jsonrpc":"2.0","id":2,"method":"echo","params":3}\n')
        assert await peer.read() == {"jsonrpc": "2.0", "id": 2, "result": 3}


async def test_cancel_request_cancels_the_handler_and_answers_32800() -> None:
    """``$/cancelRequest`` cancels the handler task; the request gets -32800."""
    started, cancelled = asyncio.Event(), asyncio.Event()
    router = Router()

    async def slow(conn: Connection, params: Any) -> None:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    router.add("slow", slow, Any)
    async with raw_pair(router) as (_server, peer):
        await peer.send_json({"jsonrpc": "2.0", "id": "s", "method": "slow"})
        await started.wait()
        await peer.send_json({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"x": 1}})
        await peer.send_json({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 9}})
        await peer.send_json({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "s"}})
        reply = await peer.read()
        assert reply["id"] == "s"
        assert reply["error"]["code"] == RequestCancelled.code
        assert cancelled.is_set()


async def test_a_cancel_right_behind_its_request_still_gets_an_answer() -> None:
    """A request cancelled in the same read as itself (its task never ran) is answered
    -32800; an ACP-style connection uses ``$/cancel_request`` with ``requestId``."""
    ran = asyncio.Event()
    router = Router()

    async def slow(conn: Connection, params: Any) -> None:
        ran.set()
        await asyncio.sleep(30)

    router.add("slow", slow, Any)
    options = {"cancel_method": "$/cancel_request", "cancel_key": "requestId"}
    async with raw_pair(router, **options) as (_server, peer):
        request = b'{"jsonrpc":"2.0","id":7,"method":"slow"}\n'
        cancel = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}\n'
        await peer.send(request + cancel)
        reply = await peer.read()
        assert reply["id"] == 7
        assert reply["error"]["code"] == RequestCancelled.code
        assert not ran.is_set()


async def test_requests_run_concurrently() -> None:
    """A fast request is answered while a slow one is still running."""
    release = asyncio.Event()
    router = echo_router()

    async def wait(conn: Connection, params: Any) -> str:
        await release.wait()
        return "done"

    router.add("wait", wait, Any)
    async with connection_pair(router) as (_server, client):
        slow = asyncio.create_task(client.request("wait"))
        assert await client.request("echo", 1) == 1
        assert not slow.done()
        release.set()
        assert await slow == "done"


async def test_plain_function_handlers_run_inline_in_frame_order() -> None:
    """A sync handler completes before the next pipelined frame is dispatched."""
    router = Router()
    logged_in: set[int] = set()

    def login(conn: Connection, params: Any) -> bool:
        logged_in.add(conn.id)
        return True

    def guard(conn: Connection, method: str) -> None:
        if method != "login" and conn.id not in logged_in:
            raise NotInitialized("login first")

    router.add("login", login, Any)
    router.add_guard(guard)
    router.add("echo", echo_router().route("echo").handler, Any)  # type: ignore[union-attr]
    async with raw_pair(router) as (_server, peer):
        await peer.send(
            b'{"jsonrpc":"2.0","id":0,"method":"echo"}\n'
            b'{"jsonrpc":"2.0","id":1,"method":"login"}\n'
            b'{"jsonrpc":"2.0","id":2,"method":"echo","params":"in"}\n'
        )
        replies = {message["id"]: message for message in [await peer.read() for _ in range(3)]}
    assert replies[0]["error"]["code"] == NotInitialized.code
    assert replies[1]["result"] is True
    assert replies[2]["result"] == "in"


async def test_handlers_see_connection_and_request_context() -> None:
    """``conn_id`` and ``request_id`` are bound inside handler tasks."""
    router = Router()

    async def where(conn: Connection, params: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return context.current()

    router.add("where", where, Any)
    async with raw_pair(router) as (server, peer):
        await peer.send_json({"jsonrpc": "2.0", "id": "r9", "method": "where"})
        reply = await peer.read()
    assert reply["result"] == {"conn_id": server.id, "request_id": "r9"}


async def test_duplicate_inflight_id_is_refused() -> None:
    """A second request reusing an id still in flight gets -32600."""
    release = asyncio.Event()
    router = Router()

    async def wait(conn: Connection, params: Any) -> None:
        await release.wait()

    router.add("wait", wait, Any)
    async with raw_pair(router) as (_server, peer):
        await peer.send_json({"jsonrpc": "2.0", "id": 1, "method": "wait"})
        await peer.send_json({"jsonrpc": "2.0", "id": 1, "method": "wait"})
        assert (await peer.read())["error"]["code"] == -32600
        release.set()
        assert await peer.read() == {"jsonrpc": "2.0", "id": 1, "result": None}


async def test_notifications_carry_structs_builtins_and_preencoded_json() -> None:
    """``notify`` accepts a Struct, builtins or msgspec.Raw; the handler gets decoded params."""
    received: list[Any] = []
    client_router = Router()
    client_router.on_notification("tick", lambda conn, params: received.append(params))
    typed: list[Sum] = []
    client_router.on_notification("sum", lambda conn, params: typed.append(params), Sum)
    async with connection_pair(Router(), client_router) as (server, _client):
        server.notify("tick", Sum(total=1))
        server.notify("tick", {"n": [2]})
        server.notify("tick", msgspec.Raw(b'{"pre":"encoded"}'))
        server.notify("tick")
        server.notify("sum", {"total": 4})
        server.notify("unknown/ignored", 1)
        await wait_until_async(lambda: len(received) == 4 and typed, 5, "the notifications")
    assert received == [{"total": 1}, {"n": [2]}, {"pre": "encoded"}, None]
    assert typed == [Sum(total=4)]


async def test_server_to_client_request_round_trip_and_errors() -> None:
    """The daemon side can call the client; errors come back as RpcError subclasses."""
    client_router = Router()

    async def approve(conn: Connection, params: Any) -> dict[str, str]:
        if params["tool"] == "rm":
            raise SessionBusy("no")
        return {"outcome": "allow_once"}

    client_router.add("ask", approve, Any)
    async with connection_pair(Router(), client_router) as (server, _client):
        assert await server.request("ask", {"tool": "ls"}) == {"outcome": "allow_once"}
        with pytest.raises(SessionBusy):
            await server.request("ask", {"tool": "rm"})


async def test_timeout_raises_peer_timeout_and_cancels_the_peer_handler() -> None:
    """PeerTimeout after the timeout; the peer receives ``$/cancelRequest`` and stops."""
    cancelled = asyncio.Event()
    client_router = Router()

    async def never(conn: Connection, params: Any) -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    client_router.add("never", never, Any)
    async with connection_pair(Router(), client_router) as (server, _client):
        with pytest.raises(PeerTimeout):
            await server.request("never", None, timeout=0.05)
        async with asyncio.timeout(scaled(5)):
            await cancelled.wait()


async def test_cancelling_the_caller_sends_cancel_request() -> None:
    """A cancelled ``request()`` call tells the peer to stop too."""
    started, cancelled = asyncio.Event(), asyncio.Event()
    router = Router()

    async def slow(conn: Connection, params: Any) -> None:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    router.add("slow", slow, Any)
    async with connection_pair(router) as (_server, client):
        call = asyncio.create_task(client.request("slow"))
        await started.wait()
        call.cancel()
        async with asyncio.timeout(scaled(5)):
            await cancelled.wait()


async def test_pending_requests_fail_with_connection_lost_when_the_peer_goes() -> None:
    """A request waiting for a peer that disconnects raises ConnectionLost."""
    async with raw_pair(Router()) as (server, peer):
        call = asyncio.create_task(server.request("never"))
        assert (await peer.read())["method"] == "never"
        peer.writer.close()
        with pytest.raises(ConnectionLost):
            await call
        with pytest.raises(ConnectionLost):
            await server.request("never")


async def test_end_of_input_still_answers_requests_already_received() -> None:
    """After the peer stops sending, running requests finish and are answered, then EOF."""
    router = Router()

    async def later(conn: Connection, params: Any) -> str:
        await asyncio.sleep(0.05)  # still running when the end of input arrives: under test
        return "answered"

    router.add("later", later, Any)
    closed: list[Connection] = []
    async with raw_pair(router) as (server, peer):
        server.add_close_callback(closed.append)
        await peer.send_json({"jsonrpc": "2.0", "id": 1, "method": "later"})
        peer.writer.write_eof()
        assert (await peer.read())["result"] == "answered"
        assert await peer.at_eof()
        await wait_until_async(lambda: closed, 5, "the close callback")
    assert closed == [server]
    assert server.closed


async def test_close_cancels_inflight_requests_and_flushes_their_answers() -> None:
    """``close()`` answers running requests with -32800 before closing the stream."""
    started = asyncio.Event()
    router = Router()

    async def slow(conn: Connection, params: Any) -> None:
        started.set()
        await asyncio.sleep(30)

    router.add("slow", slow, Any)
    async with raw_pair(router) as (server, peer):
        await peer.send_json({"jsonrpc": "2.0", "id": 7, "method": "slow"})
        await started.wait()
        await server.close()
        reply = await peer.read()
        assert reply["id"] == 7
        assert reply["error"]["code"] == -32800
        assert await peer.at_eof()
        server.notify("after", 1)  # ignored, never raises


async def test_results_and_error_data_that_cannot_be_encoded_are_still_answered() -> None:
    """An unencodable result is -32603; unencodable error data is dropped, the code kept."""
    router = Router()

    def bad_result(conn: Connection, params: Any) -> object:
        return object()

    async def bad_data(conn: Connection, params: Any) -> None:
        raise SessionBusy("busy", object())

    router.add("bad/result", bad_result, Any)
    router.add("bad/data", bad_data, Any)
    async with raw_pair(router) as (_server, peer):
        await peer.send_json({"jsonrpc": "2.0", "id": 1, "method": "bad/result"})
        assert (await peer.read())["error"]["code"] == -32603
        await peer.send_json({"jsonrpc": "2.0", "id": 2, "method": "bad/data"})
        assert await peer.read() == {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": SessionBusy.code, "message": "busy"},
        }


@pytest.mark.parametrize("framing", ["ndjson", "content-length"])
async def test_frames_far_above_64_kib_pass_in_both_directions(framing: str) -> None:
    """asyncio's 64 KiB line limit does not apply: a 5 MiB message round-trips."""
    text = "é" * (5 * 512 * 1024)
    async with connection_pair(echo_router(), framing=framing) as (_server, client):
        assert await client.request("echo", {"text": text}) == {"text": text}
