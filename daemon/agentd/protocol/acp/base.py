"""ACP wire bases: camelCase, defaults left out (``Acp``) or always written (``Always``)."""

from __future__ import annotations

import msgspec

ACP_PROTOCOL_VERSION = 1


class Acp(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """Base of every ACP value: camelCase, fields at their default left out."""


class Always(Acp, omit_defaults=False):
    """Base of ACP values whose every field is always written (capability objects)."""


class Supported(Acp):
    """An empty object: "supported" in ACP's capability records."""
