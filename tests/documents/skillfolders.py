"""Skill folders in the shapes other agents' skills have (written for the tests): front
matter with block scalars, quoted text, allowed-tools lists or strings, metadata maps,
relative script paths."""

from __future__ import annotations

from pathlib import Path

PDF_SKILL = """---
name: pdf-forms
description: >
  Fill in PDF forms and extract their fields. Use when the user
  mentions PDF forms.
license: Apache-2.0
allowed-tools: Read Bash(python3:*)
metadata:
  author: example
  version: "1.2"
---
# PDF forms

Run `scripts/fields.py FILE` to list the fields, then read `references/forms.md`.
SECRET-BODY-MARKER
"""

CHANGELOG_SKILL = """---
name: changelog
description: "Write release notes from the git log: one line per change."
allowed-tools:
  - Read
  - Grep
  - Bash(git log:*)
---
Use `git log --oneline` and group the lines by kind.
"""

REVIEW_SKILL = """---
name: code-review
description: 'Review a diff for bugs; it''s read-only.'
metadata:
  short-description: Review code
---
Read the diff and report problems with file and line.
"""


def write_skill(root: Path, folder: str, text: str, files: dict[str, str] | None = None) -> Path:
    """A skill folder ``root/folder`` with its SKILL.md and ``files`` (relative paths; those
    under ``scripts/`` executable)."""
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text)
    for relative, content in (files or {}).items():
        target = path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        if relative.startswith("scripts"):
            target.chmod(0o755)
    return path
