"""Shared settings for every wire Struct.

Every wire type derives from :class:`Wire` (camelCase on the wire, snake_case in Python,
keyword-only fields, defaults omitted so events stay small), :class:`Result` (method results:
every field always present) or :class:`Params` (request params: unknown fields are refused so
client typos fail loudly).
"""

from __future__ import annotations

import msgspec


class Wire(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """Base of every wire value that the daemon sends (results, events, content)."""


class Result(Wire, omit_defaults=False):
    """Base of method results and their parts: every field is always present (explicit
    ``null``/``false``), so clients never guess at a missing member."""


class Params(msgspec.Struct, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """Base of every request's params: unknown fields are an invalid-params error."""


class Empty(Params):
    """Params of a method that takes none (a missing ``params`` member decodes to this)."""
