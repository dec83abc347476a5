"""The chat follows the VS Code theme in a real workbench (code-server), whatever the OS says.

For VS Code's Light Modern, Dark Modern and High Contrast themes, each with the browser's
(the OS's) colour preference the other way, an approval is asked in the chat and the webview's
colours are read: every colour variable of the chat resolves to the theme's ``--vscode-*``
value (none to the stylesheet's own light or dark fallback), and the approval's diff lines
keep a 4.5:1 contrast. Screenshots: ``editors/vscode/test-results/theme-*.png``.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import scaled
from tests.vscode.codeserver import CODE_SERVER, EXTENSION, VSIX, CodeServer, Workbench, chromium
from tests.vscode.conftest import build_extension, setup_code_server
from tests.vscode.test_webview_themes import _contrast

pytestmark = [pytest.mark.e2e, pytest.mark.serial]

ARTIFACTS = EXTENSION / "test-results"
THEMES = {
    "light": ("Default Light Modern", "dark"),
    "dark": ("Default Dark Modern", "light"),
    "high-contrast": ("Default High Contrast", "light"),
}
# The chat's colour variables and the theme colour each comes from.
SOURCES = {
    "--bg": "--vscode-editor-background",
    "--fg": "--vscode-editor-foreground",
    "--muted": "--vscode-descriptionForeground",
    "--panel": "--vscode-sideBar-background",
    "--border": "--vscode-panel-border",
    "--accent": "--vscode-button-background",
    "--accent-fg": "--vscode-button-foreground",
    "--danger": "--vscode-errorForeground",
    "--user-bg": "--vscode-textBlockQuote-background",
    "--code-bg": "--vscode-textCodeBlock-background",
    "--add-bg": "--vscode-diffEditor-insertedLineBackground",
    "--del-bg": "--vscode-diffEditor-removedLineBackground",
    "--warning": "--vscode-editorWarning-foreground",
    "--focus": "--vscode-focusBorder",
}
READ_VARS = """(names) => {
  const chat = getComputedStyle(document.querySelector('.agentd-chat'));
  const root = getComputedStyle(document.documentElement);
  const out = {};
  for (const [mine, theirs] of names) {
    out[mine] = [chat.getPropertyValue(mine).trim().toLowerCase(),
                 root.getPropertyValue(theirs).trim().toLowerCase()];
  }
  const theme = new Set();  // every colour the theme defines (VS Code sets them on <html>)
  const style = document.documentElement.style;
  for (let i = 0; i < style.length; i++) {
    const name = style[i];
    if (name.startsWith('--vscode-')) theme.add(style.getPropertyValue(name).trim().toLowerCase());
  }
  return {vars: out, theme: [...theme]};
}"""
# An element's text colour and the colour behind it (its own fill or the nearest ancestor's,
# translucent fills painted over what is under them), as "rgb(...)" strings.
SEEN_AS = """(node) => {
  const parse = (c) => {
    const p = c.match(/[\\d.]+/g).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const paint = ([r, g, b, a], under) =>
    [r, g, b].map((c, i) => c * a + under[i] * (1 - a));
  const fills = [];
  for (let n = node; n; n = n.parentElement) {
    const fill = parse(getComputedStyle(n).backgroundColor);
    if (fill[3] > 0) fills.push(fill);
    if (fill[3] >= 1) break;
  }
  let under = [255, 255, 255];
  for (const fill of fills.reverse()) under = paint(fill, under);
  const text = paint(parse(getComputedStyle(node).color), under);
  const rgb = (c) => `rgb(${c.map(Math.round).join(', ')})`;
  return [rgb(text), rgb(under)];
}"""
READABLE = [
    ".tool-summary",
    ".tool-question",
    ".approval-path",
    ".approval-diff .diff-add",
    "button[data-option='allow_once']",
    "button[data-option='allow_always']",
]


@pytest.fixture(scope="module")
def built() -> None:
    if chromium() is None:
        pytest.skip("no chromium on PATH (apt install chromium)")
    setup_code_server()
    build_extension(vsix=True)
    assert CODE_SERVER.exists()
    assert VSIX.exists()


@pytest.fixture
def themed(request: pytest.FixtureRequest, built: None) -> Iterator[tuple[str, Workbench]]:
    from playwright.sync_api import sync_playwright

    name = request.param
    theme, os_scheme = THEMES[name]
    root = Path(tempfile.mkdtemp(prefix="cs-theme-", dir="/tmp"))
    settings = {
        "agentd.permissionMode": "ask",
        "workbench.colorTheme": theme,
        "window.autoDetectColorScheme": False,
        "window.autoDetectHighContrast": False,
    }
    server = CodeServer(root, settings=settings)
    server.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 900}, color_scheme=os_scheme)
            page.set_default_timeout(scaled(30) * 1000)  # a loaded machine
            bench = Workbench(page, server, ARTIFACTS)
            bench.open()
            yield name, bench
            browser.close()
    finally:
        server.stop()
        subprocess.run(["rm", "-rf", str(root)], check=False)


@pytest.mark.parametrize("themed", list(THEMES), indirect=True)
def test_the_chat_follows_the_theme_not_the_os(themed: tuple[str, Workbench]) -> None:
    name, workbench = themed
    ARTIFACTS.mkdir(exist_ok=True)
    workbench.run_command("agentd: Send Prompt")
    workbench.answer_input("hello world")
    chat: Any = workbench.chat()
    card = chat.locator("article.item--tool.tool--asking", has_text="write").first
    card.locator(".approval-diff .diff-add").wait_for(timeout=scaled(30) * 1000)
    workbench.page.screenshot(path=str(ARTIFACTS / f"theme-{name}.png"))

    resolved = chat.locator(".agentd-chat").evaluate(
        "(node, names) => (" + READ_VARS + ")(names)", list(SOURCES.items())
    )
    wrong = []
    theme = set(resolved["theme"]) | {"transparent"}
    for mine, (value, theirs) in resolved["vars"].items():
        if theirs and value != theirs:
            wrong.append(f"{mine} is {value}, the theme's {SOURCES[mine]} is {theirs}")
        elif not theirs and value not in theme:  # unset in the theme: another of its colours
            wrong.append(f"{mine} fell back to {value} ({SOURCES[mine]} is unset)")
    assert not wrong, f"{name}: " + "; ".join(wrong)
    for selector in READABLE:  # text on what is behind it, fills composed
        text, behind = card.locator(selector).first.evaluate(SEEN_AS)
        ratio = _contrast(text, behind)
        assert ratio >= 4.5, f"{name}: {selector} is {text} on {behind} ({ratio:.1f}:1)"
    card.locator("button[data-option='reject_once']").click()
