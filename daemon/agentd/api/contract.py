"""The contract of the session API: :class:`SessionApi` and :func:`refuse_local_only`.

See :mod:`agentd.api` for how it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from agentd.api.methods import SessionMethods
from agentd.errors import InvalidParams

if TYPE_CHECKING:
    from agentd.protocol.table import MethodSpec

LOCAL_ONLY_MESSAGE = "`{field}` is accepted over the Unix socket or stdio only"


def refuse_local_only(spec: MethodSpec, params: Any) -> None:
    """InvalidParams when ``params`` sets a field ``spec`` accepts from same-machine
    transports only (``providerEnv``: API keys). Every front-end that is not local (TCP, HTTP)
    calls it, so the refusal is the same error on each."""
    for name in spec.local_only:
        if getattr(params, name, None) is not None:
            wire = next(f.encode_name for f in msgspec.structs.fields(params) if f.name == name)
            raise InvalidParams(LOCAL_ONLY_MESSAGE.format(field=wire))


class SessionApi(SessionMethods, Protocol):
    """The session methods, one per ``call`` of the method table (see the module docstring).

    Parameters and results are the wire types; errors are :class:`agentd.errors.RpcError`
    subclasses with the codes and texts a JSON-RPC client gets. ``subscriber``: the caller
    that watches the session (for the methods whose table entry ``subscribes``; required by
    ``subscribe``/``unsubscribe``). Each method's contract is its table entry's ``doc`` and
    the :class:`~agentd.session.service.SessionService` docstring.
    """
