""" "Rewind to here" on a user message in the chat page (real Chromium, real daemon, real
files): the confirmation lists what will be restored, the turns after the prompt leave the
transcript, the files go back and the prompt is offered in the message box."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import scaled
from tests.rewind.scenarios import KEEP_BEFORE, SCENARIOS
from tests.web.conftest import WebDaemon, web_daemon
from tests.web.test_page import IDLE, open_page, send, shoot

pytest.importorskip("playwright")
from playwright.sync_api import BrowserContext, Dialog, Page, expect

from tests.web.test_page import browser, context  # noqa: F401  (fixtures)


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    """The page tests' daemon, its mock LLM also playing the rewind scenarios."""
    with web_daemon(SCENARIOS) as daemon:
        yield daemon


def test_rewind_to_here_restores_files_and_the_transcript(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    project = web.home.project
    (project / "keep.txt").write_text(KEEP_BEFORE)
    page = open_page(context, web)
    send(page, "rewind turn one")
    page.wait_for_function(IDLE)
    expect(page.locator(".item--assistant").last).to_contain_text("rewind-one done.")
    send(page, "rewind turn two")
    page.wait_for_function(IDLE)
    expect(page.locator(".item--assistant").last).to_contain_text("rewind-two done.")
    assert (project / "a.txt").read_text() == "two\n"

    second = page.locator(".item--user").nth(1)
    second.hover()
    button = second.get_by_role("button", name="Rewind to here")
    expect(button).to_be_visible()
    shoot(page, artifacts, "rewind-button")
    questions: list[str] = []

    def answer(dialog: Dialog) -> None:
        questions.append(dialog.message)
        dialog.accept()

    page.once("dialog", answer)
    button.click()
    expect(page.locator(".item--user")).to_have_count(1)
    (question,) = questions
    assert question.startswith("Rewind to before this prompt?")
    assert "Restore: a.txt, keep.txt" in question
    assert "Remove: sub/deep.txt" in question
    expect(page.get_by_role("textbox", name="Message")).to_have_value("rewind turn two")
    expect(page.locator(".item--assistant").last).to_contain_text("rewind-one done.")
    expect(page.locator(".banner")).to_be_hidden()
    assert (project / "a.txt").read_text() == "one\n"
    assert (project / "keep.txt").read_text() == "kept line\n"
    assert not (project / "sub" / "deep.txt").exists()
    shoot(page, artifacts, "rewind-done")


def test_declining_the_confirmation_changes_nothing(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
) -> None:
    project = web.home.project
    (project / "keep.txt").write_text(KEEP_BEFORE)
    page = open_page(context, web)
    send(page, "rewind turn one")
    page.wait_for_function(IDLE)
    expect(page.locator(".item--assistant").last).to_contain_text("rewind-one done.")
    first = page.locator(".item--user").first
    first.hover()
    page.once("dialog", lambda dialog: dialog.dismiss())
    first.get_by_role("button", name="Rewind to here").click()
    replies = page.locator(".item--assistant").count()
    # A later run shows what the session holds: no rewind happened in between.
    send(page, "rewind turn two")
    page.wait_for_function(IDLE)
    expect(page.locator(".item--assistant").last).to_contain_text("rewind-two done.")
    expect(page.locator(".item--user")).to_have_count(2)
    assert page.locator(".item--assistant").count() > replies
    assert (project / "a.txt").read_text() == "two\n"


def test_another_tab_follows_the_rewind(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
) -> None:
    """A second tab on the session drops the discarded turn when the first rewinds (the
    session_rewound event)."""
    (web.home.project / "keep.txt").write_text(KEEP_BEFORE)
    session_id = web.new_session()
    first = open_page(context, web, session_id)
    send(first, "rewind turn one")
    first.wait_for_function(IDLE)
    expect(first.locator(".item--assistant").last).to_contain_text("rewind-one done.")
    send(first, "rewind turn two")
    first.wait_for_function(IDLE)
    expect(first.locator(".item--assistant").last).to_contain_text("rewind-two done.")
    second = open_page(context, web, session_id)
    expect(second.locator(".item--user")).to_have_count(2)
    expect(second.locator(".item--assistant").last).to_contain_text("rewind-two done.")
    first.once("dialog", lambda dialog: dialog.accept())
    prompt = first.locator(".item--user").nth(1)
    prompt.hover()
    prompt.get_by_role("button", name="Rewind to here").click()
    expect(second.locator(".item--user")).to_have_count(1)
    expect(second.locator(".item--assistant").last).to_contain_text("rewind-one done.")
    expect(second.get_by_role("textbox", name="Message")).to_have_value("")


def _two_turns(page: Page) -> None:
    send(page, "rewind turn one")
    page.wait_for_function(IDLE)
    expect(page.locator(".item--assistant").last).to_contain_text("rewind-one done.")
    send(page, "rewind turn two")
    page.wait_for_function(IDLE)
    expect(page.locator(".item--assistant").last).to_contain_text("rewind-two done.")


def _rewind_second(page: Page) -> None:
    second = page.locator(".item--user").nth(1)
    second.hover()
    second.get_by_role("button", name="Rewind to here").click()


def test_a_conflict_is_shown_and_ok_forces_the_same_prompt(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    """a.txt changed by hand: the confirmation lists the conflict and says OK rewinds
    anyway; Cancel moves nothing, OK rewinds to before that prompt and overwrites a.txt."""
    project = web.home.project
    (project / "keep.txt").write_text(KEEP_BEFORE)
    page = open_page(context, web)
    _two_turns(page)
    (project / "a.txt").write_text("mine now\n")
    asked: list[str] = []

    def dismiss(dialog: Dialog) -> None:  # at once: a dialog left open holds the click
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    _rewind_second(page)
    deadline = time.monotonic() + scaled(20)
    while not asked and time.monotonic() < deadline:
        page.wait_for_timeout(50)  # a poll that lets Playwright deliver the dialog event
    assert asked, "no confirmation was asked"
    question = asked[0]
    expect(page.locator(".item--user")).to_have_count(2)
    assert "Conflicts: a.txt (changed since agentd left it; a forced rewind overwrites it)" in (
        question
    )
    assert "OK rewinds anyway" in question
    assert (project / "a.txt").read_text() == "mine now\n"
    assert (project / "sub" / "deep.txt").exists()

    page.once("dialog", lambda dialog: dialog.accept())
    _rewind_second(page)
    expect(page.locator(".item--user")).to_have_count(1)
    expect(page.get_by_role("textbox", name="Message")).to_have_value("rewind turn two")
    expect(page.locator(".banner")).to_be_hidden()
    assert (project / "a.txt").read_text() == "one\n"
    assert (project / "keep.txt").read_text() == "kept line\n"
    assert not (project / "sub" / "deep.txt").exists()
    shoot(page, artifacts, "rewind-forced")


def test_a_file_changed_during_the_confirmation_stops_the_rewind(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    """The dry run found no conflict; a.txt changes while the question is open: the rewind
    moves nothing and the banner says so, naming the file."""
    project = web.home.project
    (project / "keep.txt").write_text(KEEP_BEFORE)
    page = open_page(context, web)
    _two_turns(page)

    def change_then_accept(dialog: Dialog) -> None:
        (project / "a.txt").write_text("mine now\n")
        dialog.accept()

    page.once("dialog", change_then_accept)
    _rewind_second(page)
    banner = page.locator(".banner")
    expect(banner).to_contain_text("Not rewound (nothing changed): a.txt (changed since")
    expect(page.locator(".item--user")).to_have_count(2)
    assert (project / "sub" / "deep.txt").exists()
    assert (project / "keep.txt").read_text() == "kept twice line\nx\n"
    shoot(page, artifacts, "rewind-stopped")
