"""The approval card in the chat page (real Chromium, real daemon) at desktop and phone widths:
it shows what the call would do before the click (the diff of an edit, the command and its
directory), "Allow" is the main button and "Always allow" a quieter one naming its rule."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Home, scaled
from tests.scenarios import tool_call
from tests.web.conftest import WebDaemon
from tests.web.test_page import IDLE, open_page, send

pytest.importorskip("playwright")
from playwright.sync_api import Browser, Locator, Page, expect

from tests.web.conftest import sign_in_browser
from tests.web.test_page import browser  # noqa: F401  (fixture)
from tests.web.test_page_mcp import SERVER_START_MS

DEEP = "src/components/settings/panels/NotificationPreferences.tsx"
COMMAND = "npm test -- --runInBand --testPathPattern=notifications && git status --short"


def _asking(trigger: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    calls = [tool_call(name, args, f"call_{name}")]
    return {
        "name": trigger,
        "trigger": trigger,
        "steps": [
            {"response": {"content": "Asking first.", "tool_calls": calls}},
            {"response": {"content": "Finished."}},
        ],
    }


SCENARIOS = [
    _asking(
        "rename the flag",
        "edit",
        {
            "path": DEEP,
            "old_string": "  emailDigest: true,\n",
            "new_string": "  digest: 'weekly',\n",
        },
    ),
    _asking("run the checks", "bash", {"command": COMMAND}),
]


@pytest.fixture
def approvals_web() -> Iterator[WebDaemon]:
    home = Home()
    home.use_scenarios(SCENARIOS)
    source = home.project / DEEP
    source.parent.mkdir(parents=True)
    body = [f"  option{n}: {n},\n" for n in range(30)]
    body.insert(15, "  emailDigest: true,\n")
    source.write_text("export const defaults = {\n" + "".join(body) + "};\n")
    daemon = WebDaemon(home)
    try:
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


def _page(browser: Browser, web: WebDaemon, width: int) -> Page:  # noqa: F811
    context = browser.new_context(viewport={"width": width, "height": 860})
    context.set_default_timeout(scaled(20) * 1000)
    sign_in_browser(context, web)
    session_id = web.new_session(permissionMode="ask")
    return open_page(context, web, session_id)


def _shoot(page: Page, card: Locator, artifacts: Path, name: str) -> None:
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        card.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts / f"{name}-{scheme}.png"))


@pytest.mark.parametrize("width", [1280, 390])
def test_an_edit_shows_its_diff_before_the_click(
    browser: Browser,  # noqa: F811
    approvals_web: WebDaemon,
    artifacts: Path,
    width: int,
) -> None:
    page = _page(browser, approvals_web, width)
    send(page, "rename the flag")
    card = page.locator(".tool--asking")
    expect(card).to_have_count(1)
    box = card.get_by_role("group")
    expect(box.locator(".approval-path")).to_have_text(DEEP)
    expect(box.locator(".approval-size")).to_have_text("+1 \u22121")
    expect(box.locator(".approval-diff .diff-del")).to_have_text(["-  emailDigest: true,\n"])
    expect(box.locator(".approval-diff .diff-add")).to_have_text(["+  digest: 'weekly',\n"])
    expect(box.locator(".approval-diff .diff-ctx")).to_have_count(6)  # 3 lines around it
    expect(box.locator(".approval-diff .diff-hunk")).to_have_text(["@@ -14,7 +14,7 @@\n"])
    summary = card.locator(".tool-summary").bounding_box()
    assert summary is not None
    assert summary["width"] > 80
    allow = box.get_by_role("button", name="Allow", exact=True)
    always = box.get_by_role("button", name="Always allow this session · edit")
    expect(allow).to_be_focused()
    expect(always).to_have_attribute(
        "title", "Adds the rule edit for this session: it allows matching calls without asking."
    )
    main, quiet = _look(allow), _look(always)  # the main choice is the filled one
    assert main["background"] != "rgba(0, 0, 0, 0)"
    assert quiet["background"] == "rgba(0, 0, 0, 0)"
    assert float(quiet["fontSize"]) < float(main["fontSize"])
    path_box = box.locator(".approval-path").bounding_box()
    assert path_box is not None
    assert path_box["width"] > 100
    _shoot(page, card, artifacts, f"approval-edit-{width}")
    allow.click()
    page.wait_for_function(IDLE)
    assert "digest: 'weekly'" in (approvals_web.home.project / DEEP).read_text()
    expect(page.locator(".tool-permission:visible")).to_have_count(0)
    page.context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_command_shows_itself_and_its_directory(
    browser: Browser,  # noqa: F811
    approvals_web: WebDaemon,
    artifacts: Path,
    width: int,
) -> None:
    page = _page(browser, approvals_web, width)
    send(page, "run the checks")
    box = page.locator(".tool--asking").get_by_role("group")
    expect(box.locator(".approval-command")).to_have_text(f"$ {COMMAND}")
    expect(box.locator(".approval-cwd")).to_have_text(str(approvals_web.home.project))
    rule = "bash(npm test:*), bash(git status:*)"
    expect(box.get_by_role("button", name=f"Always allow this session · {rule}")).to_be_visible()
    command_box = box.locator(".approval-command").bounding_box()
    assert command_box is not None
    assert command_box["x"] + command_box["width"] <= width
    _shoot(page, page.locator(".tool--asking"), artifacts, f"approval-bash-{width}")
    box.get_by_role("button", name="Reject", exact=True).click()
    page.wait_for_function(IDLE)
    expect(page.locator(".item--tool .tool-status")).to_have_text("rejected")
    page.context.close()


def _look(button: Locator) -> dict[str, str]:
    """The button's computed fill and font size (px, as a number string)."""
    return dict(
        button.evaluate(
            "(b) => { const s = getComputedStyle(b); "
            "return {background: s.backgroundColor, fontSize: parseFloat(s.fontSize).toString()}; }"
        )
    )


@pytest.fixture
def mcp_web() -> Iterator[WebDaemon]:
    from tests.mcp.conftest import SCENARIOS as MCP_SCENARIOS
    from tests.mcp.conftest import server_table, write_user_config

    home = Home()
    url = "https://docs.example.org/guide?page=2"
    home.use_scenarios([_asking("read the guide", "web_fetch", {"url": url}), *MCP_SCENARIOS])
    write_user_config(home, server_table())
    daemon = WebDaemon(home)
    try:
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


def test_a_fetch_shows_its_url_and_an_mcp_call_its_server_tool_and_arguments(
    browser: Browser,  # noqa: F811
    mcp_web: WebDaemon,
    artifacts: Path,
) -> None:
    page = _page(browser, mcp_web, 390)
    send(page, "read the guide")
    box = page.locator(".tool--asking").get_by_role("group")
    url = box.locator(".approval-url")  # the session's first run starts its MCP server first
    expect(url).to_have_text("https://docs.example.org/guide?page=2", timeout=SERVER_START_MS)
    rule = "web_fetch(domain:docs.example.org)"
    expect(box.get_by_role("button", name=f"Always allow this session · {rule}")).to_be_visible()
    _shoot(page, page.locator(".tool--asking"), artifacts, "approval-url-390")
    box.get_by_role("button", name="Reject", exact=True).click()
    page.wait_for_function(IDLE)
    send(page, "mcp-add")
    box = page.locator(".tool--asking").get_by_role("group")
    expect(box.locator(".approval-server")).to_have_text("t")
    expect(box.locator(".approval-mcp-tool")).to_have_text("add")
    expect(box.locator(".approval-arguments")).to_have_text('{\n  "a": 2,\n  "b": 3\n}')
    _shoot(page, page.locator(".tool--asking"), artifacts, "approval-mcp-390")
    box.get_by_role("button", name="Allow", exact=True).click()
    page.wait_for_function(IDLE)
    expect(page.locator(".item--tool").last.locator(".tool-output")).to_have_text("5")
    page.context.close()


def test_always_says_how_long_and_the_project_choice_keeps_the_rule(
    browser: Browser,  # noqa: F811
    approvals_web: WebDaemon,
    artifacts: Path,
) -> None:
    """The "always" buttons say they last this session; "Always allow in this project"
    writes the rule to the user's config for the folder, and the next session there runs
    the command without asking."""
    page = _page(browser, approvals_web, 1280)
    send(page, "run the checks")
    card = page.locator(".tool--asking")
    box = card.get_by_role("group")
    rule = "bash(npm test:*), bash(git status:*)"
    session = box.get_by_role("button", name=f"Always allow this session · {rule}")
    project = box.get_by_role("button", name=f"Always allow in this project · {rule}")
    expect(session).to_have_attribute(
        "title", f"Adds the rule {rule} for this session: it allows matching calls without asking."
    )
    expect(project).to_have_attribute(
        "title", re.compile(r"saves it in your config for this folder")
    )
    expect(box.get_by_role("button", name=f"Always reject this session · {rule}")).to_be_visible()
    _shoot(page, card, artifacts, "approval-always-project")
    project.click()
    page.wait_for_function(IDLE)
    expect(page.locator(".tool--asking")).to_have_count(0)  # it ran (npm fails here: no matter)
    config = (approvals_web.home.config_dir / "agentd" / "config.toml").read_text()
    assert "[[project_rules]]" in config, config
    assert f'folder = "{approvals_web.home.project}"' in config, config
    assert 'allow = ["bash(npm test:*)", "bash(git status:*)"]' in config, config
    page.context.close()

    again = _page(browser, approvals_web, 1280)
    send(again, "run the checks")
    again.wait_for_function(IDLE)
    expect(again.locator(".tool--asking")).to_have_count(0)
    expect(again.locator(".item--tool")).to_have_count(1)
    again.context.close()
