"""The ``lsp`` tool and the diagnostics after edits with typescript-language-server and
TypeScript (npm, ``tests/langserver/typescript``, installed with ``npm ci``) on a small
project, through a real daemon and the mock LLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import Home, new_session, run, stdio_client
from tests.langserver.conftest import ends, lsp, off, one_call, result_text, table
from tests.mcp.npm import installed, node

pytestmark = pytest.mark.e2e
HERE = Path(__file__).parent / "typescript"
UTIL = "export function helper(x: number): number {\n  return x + 1;\n}\n"
MAIN = 'import { helper } from "./util";\n\nexport const value: number = helper(2);\n'
SCENARIOS = [
    lsp("ts-definition", operation="definition", path="main.ts", line=3, symbol="helper"),
    lsp("ts-references", operation="references", path="util.ts", line=1, symbol="helper"),
    lsp("ts-hover", operation="hover", path="main.ts", line=3, symbol="helper"),
    one_call(
        "ts-break",
        "edit",
        {"path": "main.ts", "old_string": "helper(2)", "new_string": 'helper("two")'},
    ),
    one_call(
        "ts-fix",
        "edit",
        {"path": "main.ts", "old_string": 'helper("two")', "new_string": "helper(2)"},
    ),
]


def _setup(home: Home) -> None:
    """The installed server as the only TypeScript one, the project, the scenarios."""
    modules = installed(HERE)
    server = modules / ".bin" / "typescript-language-server"
    init = {"tsserver": {"path": str(modules / "typescript" / "lib")}}
    home.user_config(
        table("tsls", node(), str(server), "--stdio", extensions=[".ts"],
              initialization_options=init)
        + off("typescript")
    )  # fmt: skip
    (home.project / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    (home.project / "util.ts").write_text(UTIL)
    (home.project / "main.ts").write_text(MAIN)
    home.use_scenarios(SCENARIOS)


async def test_typescript_positions_and_a_type_error(home: Home) -> None:
    _setup(home)
    found = []
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        for trigger in ("ts-definition", "ts-references", "ts-hover", "ts-break", "ts-fix"):
            _, events = await run(client, sid, trigger, timeout=120)
            found += ends(events)
    definition, references, hover, broken, fixed = found
    (place,) = definition["details"]["items"]  # the declaration, or the import binding
    assert (place["path"], place["line"], place["column"]) in (
        ("util.ts", 1, 17),
        ("main.ts", 1, 10),
    )
    assert references["details"]["total"] == 3, result_text(references)
    assert "helper(x: number): number" in result_text(hover)
    text = result_text(broken)
    assert "main.ts:3:37: error:" in text, text
    assert "not assignable to parameter of type 'number'" in text
    assert fixed["details"]["diagnostics"] == []
