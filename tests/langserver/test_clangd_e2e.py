"""The ``lsp`` tool and the diagnostics after edits with clangd (Debian's package) on a small
C project, through a real daemon and the mock LLM."""

from __future__ import annotations

import pytest

from tests.harness import Home, new_session, run, stdio_client
from tests.langserver.conftest import (
    C_SCENARIOS,
    clangd_table,
    ends,
    make_c_project,
    result_text,
)

pytestmark = pytest.mark.e2e


async def test_clangd_definition_hover_and_a_type_error(home: Home) -> None:
    make_c_project(home.project)
    home.use_scenarios(C_SCENARIOS)
    home.user_config(clangd_table())
    found = []
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        for trigger in ("c-definition", "c-hover", "c-break", "c-fix"):
            _, events = await run(client, sid, trigger, timeout=90)
            found += ends(events)
    definition, hover, broken, fixed = found
    assert "int helper(int x)" in result_text(definition), result_text(definition)
    assert "helper" in result_text(hover)
    assert "New problems the language server reports" in result_text(broken)
    assert broken["details"]["diagnostics"][0]["severity"] in ("error", "warning")
    assert "main.c:3:" in result_text(broken)
    assert fixed["details"]["diagnostics"] == []
