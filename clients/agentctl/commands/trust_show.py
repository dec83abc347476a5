"""What trusting a folder covers, as ``agentctl trust`` and the terminal offer show it: every
control path of the folder (:data:`agentd.protocol.control_pins.CONTROL_PATHS`) as it is now
— the settings and hooks of ``.agentd.toml``, each ``.mcp.json`` server with its command
line, the files of ``.agentd/hooks/``, ``commands/``, ``agents/`` and ``skills/`` — and the
ones that do not exist yet, which will need trusting once they appear.

The files come from the repository, so every text shown is escaped (control characters as
``\\u001b``…, long values and lists shortened): it goes to a terminal. The snapshots the lines
were made from are returned too, so that what is pinned is exactly what was shown.
"""

from __future__ import annotations

from pathlib import Path

from agentd.protocol.control_pins import Snapshot, control_paths, read_control

MAX_SHOWN_SETTINGS = 40
MAX_SHOWN_VALUE = 120
MAX_SHOWN_FILES = 20


def covered(folder: Path) -> tuple[list[str], list[Snapshot | None]]:
    """The lines describing each control path of ``folder`` (indented details under a
    heading line), and the snapshots they describe (None for a path that does not exist)."""
    lines: list[str] = []
    snapshots: list[Snapshot | None] = []
    for path, kind, about in control_paths(folder):
        snapshot = read_control(path)
        snapshots.append(snapshot)
        name = str(path.relative_to(folder)) + ("/" if kind == "folder" else "")
        if snapshot is None:
            lines.append(f"{name} ({about}): none now; one created later needs trusting")
        elif snapshot.pin is None:
            problem = _shown(snapshot.problem or "unreadable")
            lines.append(f"{name} ({about}): cannot be trusted: {problem}")
        else:
            lines.append(f"{name} ({about}):")
            lines += [f"    {line}" for line in _details(path.name, kind, snapshot)]
    return lines, snapshots


def later_changes(folder: Path) -> str:
    """The sentence that says what will need trusting again."""
    return (
        "Trust pins these as they are now: if any of them changes, or one that does not exist "
        "appears (here or in a subfolder), agentd does not use it (no settings, servers, "
        f"hooks, commands or profiles from it) until you run `agentctl trust {folder}` again."
    )


def _details(name: str, kind: str, snapshot: Snapshot) -> list[str]:
    if kind == "folder":
        return _folder_lines(snapshot)
    data = snapshot.files.get("", b"")
    if name == ".mcp.json":
        return mcp_json_lines(data)
    return describe_settings(data)


def _folder_lines(snapshot: Snapshot) -> list[str]:
    names = sorted(snapshot.files)
    if not names:
        return ["(no files)"]
    shown = [_shown(name) for name in names[:MAX_SHOWN_FILES]]
    more = f" … and {len(names) - MAX_SHOWN_FILES} more" if len(names) > MAX_SHOWN_FILES else ""
    return [", ".join(shown) + more]


def mcp_json_lines(data: bytes) -> list[str]:
    """Each server of a ``.mcp.json`` with its command line or URL (and the names of the
    environment variables it sets; never their values)."""
    import json  # trust reviews only, like the two below

    try:
        servers = json.loads(data.decode("utf-8")).get("mcpServers")
        if not isinstance(servers, dict):
            raise ValueError('no "mcpServers" object')
    except (ValueError, AttributeError) as exc:
        return [f"(cannot read it: {_shown(str(exc))})"]
    lines = []
    for name, entry in servers.items():
        entry = entry if isinstance(entry, dict) else {}
        args = entry.get("args")
        words = [entry.get("command"), *(args if isinstance(args, list) else [])]
        target = entry.get("url") or " ".join(str(part) for part in words)
        env = entry.get("env") if isinstance(entry.get("env"), dict) else {}
        names = f" (env: {', '.join(_shown(str(key)) for key in env)})" if env else ""
        lines.append(f"server {_shown(str(name))}: {_shown(str(target))}{names}")
    return lines or ["(no servers)"]


def describe_settings(data: bytes) -> list[str]:
    """The settings of a TOML file as ``dotted.key = value`` lines, each hook as ``hook EVENT:
    COMMAND`` (values as JSON with every control character escaped; long values and long
    lists shortened)."""
    import tomllib

    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return [f"(cannot read it: {_shown(str(exc))})"]
    hooks = table.pop("hooks", None)
    lines = [f"{key} = {_value(value)}" for key, value in _flatten(table, "")]
    if len(lines) > MAX_SHOWN_SETTINGS:
        hidden = len(lines) - MAX_SHOWN_SETTINGS
        lines = [*lines[:MAX_SHOWN_SETTINGS], f"… and {hidden} more (see the file)"]
    lines += _hook_lines(hooks)
    return lines or ["(no settings)"]


def _hook_lines(hooks: object) -> list[str]:
    if not isinstance(hooks, dict):
        return []
    lines = []
    for event, entries in hooks.items():
        for hook in entries if isinstance(entries, list) else []:
            if isinstance(hook, dict):
                matcher = hook.get("matcher", "*")
                shown = f" (matcher {_value(matcher)})" if matcher != "*" else ""
                lines.append(f"hook {_shown(str(event))}: {_value(hook.get('command'))}{shown}")
    return lines


def _flatten(table: dict[str, object], prefix: str) -> list[tuple[str, object]]:
    items: list[tuple[str, object]] = []
    for key, value in table.items():
        name = prefix + (key if key.isidentifier() else _value(key))
        if isinstance(value, dict):
            items += _flatten(value, name + ".")
        else:
            items.append((name, value))
    return items


def _value(value: object) -> str:
    import json

    text = json.dumps(value, ensure_ascii=True, default=str)
    if len(text) > MAX_SHOWN_VALUE:
        text = text[: MAX_SHOWN_VALUE - 1] + "…"
    return text


def _shown(text: str) -> str:
    """Plain text from the repository, every non-printable character escaped."""
    import json

    shown = "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in text)
    return shown if len(shown) <= MAX_SHOWN_VALUE else shown[: MAX_SHOWN_VALUE - 1] + "…"
