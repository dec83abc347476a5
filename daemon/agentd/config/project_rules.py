"""Permission rules the user keeps for one folder: ``[[project_rules]]`` tables of their own
config file.

::

    [[project_rules]]
    folder = "/home/me/src/app"
    allow = ["bash(npm test:*)"]

They apply to every session whose working directory is that folder or below it, after the
``[permissions]`` rules (a project's ``.agentd.toml`` cannot set them). An approval answered
"always in this project" appends such a table (:func:`save_project_rules`): appending an
array-of-tables entry keeps whatever else the file says, comments included.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from agentd.config.schema import ConfigFile
from agentd.errors import ConfigError


def project_rules(settings: ConfigFile, cwd: Path) -> tuple[list[str], list[str]]:
    """The allow and deny rules of the ``[[project_rules]]`` tables whose folder holds
    ``cwd`` (the folder itself or one above it)."""
    allow: list[str] = []
    deny: list[str] = []
    for section in settings.project_rules:
        folder = Path(section.folder)
        if folder.is_absolute() and (cwd == folder or folder in cwd.parents):
            allow += [rule for rule in section.allow if rule not in allow]
            deny += [rule for rule in section.deny if rule not in deny]
    return allow, deny


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, ``\\uXXXX`` included)."""
    import json  # only when a rule is written to the file

    return json.dumps(text, ensure_ascii=True)


def save_project_rules(config_file: Path, folder: Path, allow: list[str]) -> None:
    """Append a ``[[project_rules]]`` table allowing ``allow`` in ``folder`` to the user's
    ``config_file`` (created 0600, its folder 0700, when missing). The file is checked
    before and after: one that is not valid TOML, or whose ``project_rules`` is not an
    array of tables, is left as it was and ConfigError says why."""
    old = config_file.read_text(encoding="utf-8") if config_file.is_file() else ""
    try:
        current = tomllib.loads(old)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {config_file}: {exc}; the rule was not saved") from None
    if not isinstance(current.get("project_rules", []), list):
        raise ConfigError(f"config file {config_file}: project_rules is not an array of tables")
    rules = ", ".join(_toml_string(rule) for rule in allow)
    table = (
        '\n[[project_rules]]  # added by an "always in this project" answer\n'
        f"folder = {_toml_string(str(folder))}\nallow = [{rules}]\n"
    )
    text = old + ("\n" if old and not old.endswith("\n") else "") + table
    tomllib.loads(text)  # what is appended always parses; checked all the same
    config_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(config_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        out.write(text[len(old) :])
