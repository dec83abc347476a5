"""A notebook edit in the chat page (real Chromium, real daemon): the approval shows the
diff of the cell's source, and the finished card shows it too (screenshots in the
artifacts folder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.documents.notebooks import write_notebook
from tests.harness import Home, scaled
from tests.scenarios import tool_call
from tests.web.conftest import WebDaemon
from tests.web.test_page import IDLE, open_page, send

pytest.importorskip("playwright")
from playwright.sync_api import Browser, expect

from tests.web.conftest import sign_in_browser
from tests.web.test_page import browser  # noqa: F401  (fixture)

ARGS = {"path": "nb.ipynb", "cell_id": "code-2", "source": "print('bye')\nx = 1"}
SCENARIO = {
    "name": "notebook-card",
    "trigger": "change the notebook cell",
    "steps": [
        {
            "response": {
                "content": "Editing.",
                "tool_calls": [tool_call("notebook_edit", ARGS, "nb1")],
            }
        },
        {"response": {"content": "Finished."}},
    ],
}


@pytest.fixture
def notebook_web() -> Iterator[WebDaemon]:
    home = Home()
    home.use_scenarios([SCENARIO])
    write_notebook(home.project / "nb.ipynb")
    daemon = WebDaemon(home)
    try:
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


def test_the_cell_diff_is_shown_before_and_after(
    browser: Browser,  # noqa: F811
    notebook_web: WebDaemon,
    artifacts: Path,
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(scaled(20) * 1000)
    sign_in_browser(context, notebook_web)
    page = open_page(context, notebook_web, notebook_web.new_session(permissionMode="ask"))
    send(page, "change the notebook cell")
    card = page.locator(".tool--asking")
    expect(card).to_have_count(1)
    box = card.get_by_role("group")
    expect(box.locator(".approval-path")).to_have_text("nb.ipynb#cell2")
    expect(box.locator(".approval-diff .diff-del")).to_have_text(["-print('hello')\n"])
    expect(box.locator(".approval-diff .diff-add")).to_have_text(["+print('bye')\n"])
    page.screenshot(path=str(artifacts / "notebook-approval.png"))
    box.get_by_role("button", name="Allow", exact=True).click()
    page.wait_for_function(IDLE)
    diff = page.locator(".tool-diff:visible")
    expect(diff).to_have_count(1)
    expect(diff.locator(".diff-del")).to_have_text(["-print('hello')\n"])
    expect(diff.locator(".diff-add")).to_have_text(["+print('bye')\n"])
    page.screenshot(path=str(artifacts / "notebook-card.png"))
    assert b"print('bye')" in (notebook_web.home.project / "nb.ipynb").read_bytes()
    context.close()
