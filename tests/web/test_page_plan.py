"""The agent's plan in the chat page (real Chromium, real daemon): pinned above the
transcript, updated in place, and back after a reload (from ``session/state``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.conftest import WebDaemon
from tests.web.test_page import IDLE, open_page, send, shoot

pytest.importorskip("playwright")
from playwright.sync_api import BrowserContext, expect

from tests.web.test_page import browser, context  # noqa: F401  (fixtures)


def test_plan_is_pinned_above_the_transcript(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    page = open_page(context, web)
    plan = page.get_by_role("region", name="Plan")
    expect(plan).to_be_hidden()
    send(page, "work through a plan")
    page.wait_for_function(IDLE)
    expect(plan).to_be_visible()
    expect(plan.locator(".plan-head")).to_have_text("Plan · 3/3 done")
    steps = plan.locator(".plan-step")
    expect(steps).to_have_text(["✔Read the parser", "✔Fix the off-by-one", "✔Run the tests"])
    expect(plan.locator(".plan-step--completed")).to_have_count(3)
    plan_box = plan.bounding_box()
    log_box = page.locator(".log").bounding_box()
    assert plan_box is not None
    assert log_box is not None
    assert plan_box["y"] + plan_box["height"] <= log_box["y"] + 1
    shoot(page, artifacts, "plan")

    page.reload()
    page.wait_for_function("() => document.documentElement.dataset.ready === 'true'")
    expect(page.locator(".plan-head")).to_have_text("Plan · 3/3 done")


def test_plan_in_progress_is_marked(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    """While the run waits between the two plans the first is shown, its current step
    marked in progress."""
    page = open_page(context, web)
    send(page, "update the plan quietly")
    expect(page.locator(".plan-step--in_progress")).to_have_text("▸Fix the off-by-one")
    shoot(page, artifacts, "plan-in-progress")
    page.wait_for_function(IDLE)
    expect(page.locator(".plan-step--in_progress")).to_have_count(0)


def test_todo_calls_show_as_the_plan_only(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    """The two ``todo`` calls of a plan get no tool card (no raw JSON of the steps in the
    transcript), live and after a reload; the pinned plan is what shows them."""
    page = open_page(context, web)
    send(page, "work through a plan")
    page.wait_for_function(IDLE)
    expect(page.locator(".plan-head")).to_have_text("Plan · 3/3 done")
    log = page.locator(".log")
    expect(log).to_contain_text("All three steps are done.")
    expect(log.locator(".item--tool:visible")).to_have_count(0)
    shown = log.inner_text()  # what is rendered (a hidden node's text is not)
    assert "todos" not in shown
    assert "Read the parser" not in shown
    shoot(page, artifacts, "plan-no-todo-cards")
    page.reload()
    page.wait_for_function("() => document.documentElement.dataset.ready === 'true'")
    expect(page.locator(".plan-head")).to_have_text("Plan · 3/3 done")
    expect(log).to_contain_text("All three steps are done.")
    expect(log.locator(".item--tool:visible")).to_have_count(0)
    assert "Read the parser" not in log.inner_text()
