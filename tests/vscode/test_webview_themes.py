"""The chat webview follows the VS Code theme, never the OS setting, and its approval card shows
the change (headless Chromium with the webview bundle, events recorded from the real daemon).

VS Code gives a webview its theme as ``--vscode-*`` CSS variables on ``<html>`` and a body class
(``vscode-light``, ``vscode-dark``, ``vscode-high-contrast``). Each theme here is set with the
OS preference the other way; every colour on screen must then come from the theme: none of the
stylesheet's own fallback colours may show, and diff lines stay readable (contrast ≥ 4.5:1).
Screenshots go to ``editors/vscode/test-results/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness import scaled
from tests.vscode.codeserver import EXTENSION, REPO, chromium
from tests.vscode.conftest import build_extension
from tests.vscode.webview_harness import as_session, record, serve_harness

ARTIFACTS = EXTENSION / "test-results"
STYLE = REPO / "daemon" / "agentd" / "web" / "ui" / "style.css"


# A light, a dark and a high-contrast theme (values of the kind VS Code themes set; none equal
# to a fallback colour of the stylesheet, so a fallback that shows is caught).
THEMES: dict[str, tuple[str, str, dict[str, str]]] = {
    "light": (
        "vscode-light",
        "dark",  # the OS says dark
        {
            "editor-background": "#fdf6e3",
            "editor-foreground": "#3b3b3b",
            "descriptionForeground": "#6c6c6c",
            "sideBar-background": "#eee8d5",
            "panel-border": "#c9c0a8",
            "button-background": "#ac9d57",
            "button-foreground": "#fdf6e3",
            "errorForeground": "#b0281a",
            "textBlockQuote-background": "#f0e9d2",
            "textCodeBlock-background": "#efe7cf",
            "diffEditor-insertedLineBackground": "#d6ecc1",
            "diffEditor-removedLineBackground": "#f6d3cf",
            "editorWarning-foreground": "#8a6100",
            "focusBorder": "#b49471",
        },
    ),
    "dark": (
        "vscode-dark",
        "light",  # the OS says light
        {
            "editor-background": "#272822",
            "editor-foreground": "#f8f8f2",
            "descriptionForeground": "#bdbdb1",
            "sideBar-background": "#1e1f1c",
            "panel-border": "#414339",
            "button-background": "#75715e",
            "button-foreground": "#f8f8f2",
            "errorForeground": "#f48771",
            "textBlockQuote-background": "#34352f",
            "textCodeBlock-background": "#303128",
            "diffEditor-insertedLineBackground": "#3e4a1f",
            "diffEditor-removedLineBackground": "#58272b",
            "editorWarning-foreground": "#cca700",
            "focusBorder": "#99947c",
        },
    ),
    "high-contrast": (
        "vscode-high-contrast",
        "light",
        {
            "editor-background": "#000000",
            "editor-foreground": "#ffffff",
            "descriptionForeground": "#e0e0e0",
            "sideBar-background": "#000000",
            "panel-border": "#6fc3df",
            "button-background": "#0f4a85",
            "button-foreground": "#ffffff",
            "errorForeground": "#f48771",
            "textBlockQuote-background": "#0a0a0a",
            "textCodeBlock-background": "#0a0a0a",
            "contrastBorder": "#6fc3df",
            "diffEditor-insertedTextBorder": "#33ff2e",
            "diffEditor-removedTextBorder": "#ff008f",
            "editorWarning-foreground": "#ffd370",
            "focusBorder": "#f38518",
        },
    ),
}

# What every element's computed colours are (text, fill, borders), as "rgb(r, g, b)" strings.
COLOURS_JS = """() => {
  const seen = new Set();
  for (const node of document.querySelectorAll('.agentd-chat, .agentd-chat *')) {
    if (!node.getClientRects().length) continue;
    const s = getComputedStyle(node);
    for (const value of [s.color, s.backgroundColor, s.borderTopColor, s.borderBottomColor,
                         s.borderLeftColor, s.borderRightColor]) seen.add(value);
  }
  return [...seen];
}"""
# As VS Code does: the theme's class on <body>, its colours as variables on <html>.
APPLY_THEME = """([cls, vars]) => {
  document.body.classList.add(cls);
  for (const [k, v] of Object.entries(vars)) {
    document.documentElement.style.setProperty(`--vscode-${k}`, v);
  }
}"""
SCENARIOS = {
    "scenarios": [
        {
            "name": "write-then-edit",
            "trigger": "write then edit",
            "steps": [
                {
                    "response": {
                        "content": "Writing.",
                        "tool_calls": [
                            {
                                "id": "call_w",
                                "type": "function",
                                "function": {
                                    "name": "write",
                                    "arguments": json.dumps(
                                        {
                                            "path": "src/settings/loader.py",
                                            "content": "".join(
                                                f"value_{n} = {n}\n" for n in range(9)
                                            ),
                                        }
                                    ),
                                },
                            }
                        ],
                    }
                },
                {
                    "response": {
                        "content": "Editing.",
                        "tool_calls": [
                            {
                                "id": "call_e",
                                "type": "function",
                                "function": {
                                    "name": "edit",
                                    "arguments": json.dumps(
                                        {
                                            "path": "src/settings/loader.py",
                                            "old_string": "value_4 = 4\n",
                                            "new_string": "value_4 = 40\n",
                                        }
                                    ),
                                },
                            }
                        ],
                    }
                },
                {"response": {"content": "Done."}},
            ],
        }
    ]
}


def _rgb(hex_colour: str) -> str:
    value = hex_colour.lstrip("#")
    if len(value) == 3:
        value = "".join(c * 2 for c in value)
    r, g, b = (int(value[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgb({r}, {g}, {b})"


def _fallbacks() -> set[str]:
    """Every literal colour in the stylesheet (the fallbacks used outside VS Code)."""
    return {
        _rgb(found)
        for found in re.findall(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b", STYLE.read_text())
    }


def _luminance(rgb: str) -> float:
    channels = [int(c) / 255 for c in re.findall(r"\d+", rgb)[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    if chromium() is None:
        pytest.skip("no chromium on PATH (apt install chromium)")
    build_extension()
    folder = tmp_path_factory.mktemp("themes")
    scenarios = folder / "scenarios.json"
    scenarios.write_text(json.dumps(SCENARIOS))
    return as_session(record("write then edit", folder / "run.jsonl", "ask", scenarios))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.mark.parametrize("theme", list(THEMES))
def test_colours_follow_the_theme_not_the_os(
    browser: Any, events: list[dict[str, Any]], theme: str
) -> None:
    body_class, os_scheme, variables = THEMES[theme]
    ARTIFACTS.mkdir(exist_ok=True)
    with serve_harness() as url:
        page = browser.new_page(viewport={"width": 420, "height": 900}, color_scheme=os_scheme)
        page.set_default_timeout(scaled(30) * 1000)  # a loaded machine
        page.goto(url)
        page.wait_for_selector("html[data-ready='true']")
        page.evaluate(
            APPLY_THEME,
            [body_class, variables],
        )
        asks = [i for i, e in enumerate(events) if e["event"]["type"] == "permission_request"]
        page.evaluate("(events) => feed(events)", events[: asks[1] + 1])  # the edit's approval
        request = events[asks[1]]["event"]
        params = {"sessionId": "S", "toolCallId": request["toolCallId"], "tool": request["tool"]}
        params |= {
            "args": request["args"],
            "options": request["options"],
            "preview": request["preview"],
        }
        page.evaluate("(params) => ask(3, params)", params)
        card = page.locator("article.item--tool.tool--asking")
        card.locator(".approval-diff .diff-add").wait_for()
        page.screenshot(path=str(ARTIFACTS / f"webview-theme-{theme}.png"))

        assert card.locator(".approval-path").inner_text() == "src/settings/loader.py"
        assert card.locator(".approval-diff .diff-del").inner_text().strip() == "-value_4 = 4"
        assert card.locator(".approval-diff .diff-add").inner_text().strip() == "+value_4 = 40"
        always = card.locator("button[data-option='allow_always']")
        assert always.inner_text() == "Always allow this session · edit"

        shown = set(page.evaluate(COLOURS_JS))
        theme_colours = {_rgb(v) for v in variables.values()}
        leaked = (shown & _fallbacks()) - theme_colours
        assert not leaked, f"fallback colours shown in the {theme} theme: {sorted(leaked)}"
        fg = _rgb(variables["editor-foreground"])
        for kind in ("add", "del"):
            line = card.locator(f".approval-diff .diff-{kind}")
            back = line.evaluate("(n) => getComputedStyle(n).backgroundColor")
            if back == "rgba(0, 0, 0, 0)":  # high contrast: no fill, the editor's background
                back = _rgb(variables["editor-background"])
            assert line.evaluate("(n) => getComputedStyle(n).color") == fg
            assert _contrast(fg, back) >= 4.5, (theme, kind, back)
        page.close()
