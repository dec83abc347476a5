"""The configuration schema's annotations are objects, not strings.

msgspec builds a Struct's type information on its first ``convert``; a string annotation
(``from __future__ import annotations``) is then compiled and evaluated one by one, which
made the first config read of every process ~15 ms slower. Every Struct the config file is
converted into must hold evaluated annotations.
"""

from __future__ import annotations

import typing
from typing import Any

import msgspec

from agentd.config.schema import ConfigFile


def _structs(kind: Any, seen: set[type[msgspec.Struct]]) -> None:
    """Every Struct reachable from ``kind`` (through unions, containers, Annotated)."""
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        if kind in seen:
            return
        seen.add(kind)
        for base in kind.__mro__:
            for value in vars(base).get("__annotations__", {}).values():
                _structs(value, seen)
        return
    for arg in typing.get_args(kind):
        _structs(arg, seen)


def test_every_struct_of_the_config_file_has_evaluated_annotations() -> None:
    seen: set[type[msgspec.Struct]] = set()
    _structs(ConfigFile, seen)
    assert len(seen) > 10  # the whole tree was walked, not only its root
    strings = {
        f"{struct.__module__}.{struct.__qualname__}.{name}"
        for struct in seen
        for base in struct.__mro__
        for name, value in vars(base).get("__annotations__", {}).items()
        if isinstance(value, str)
    }
    assert not strings, f"string annotations (a `from __future__ import annotations`?): {strings}"
