"""Watching and steering a running turn from the console, in a real browser: the turn's step
changes on the workspace's overview as it goes, without a reload, and Stop stops it, as the
operator sees in their chat."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from playwright.async_api import Page, expect

from bridge import texts
from tests.adapters.telegram_harness import ALICE
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import GATED, Console
from tests.admin.harness import ACME_TOKEN, GLOBAL_TOKEN
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

pytestmark = LOOP

OPERATOR = int(ALICE["telegram_user_id"])
DONE = "The checks passed."
THINKING = re.compile(r"^thinking \(model call\) for \d+ s$")  # the overview's words, timed
RUNNING = re.compile(rf"^running tool {GATED} for \d+ s$")  # the tool's name as code


async def test_a_running_turns_step_changes_on_the_overview_without_a_reload(
    console: Console,
    page: Page,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    gate: Path,
) -> None:
    held = asyncio.Event()
    anthropic_api.script = [tools((GATED, {}), hold=held), text(DONE)]
    telegram_api.push_message("run the checks", user=OPERATOR)
    await until(lambda: len(anthropic_api.requests) == 1)  # the turn is running
    await console.log_in(GLOBAL_TOKEN)
    await console.open("/w/acme/")
    await expect(console.step()).to_have_text(THINKING)  # the model has not answered
    await page.evaluate("window.stillThisPage = true")
    held.set()
    await expect(console.step()).to_have_text(RUNNING)  # the model chose a tool
    await asyncio.to_thread(gate.touch)
    await until(lambda: telegram_api.chat(OPERATOR) == [DONE])
    await expect(console.session_row()).to_have_attribute("data-state", "idle")
    await expect(console.step()).to_have_text("idle")
    assert await page.evaluate("window.stillThisPage === true"), "no reload: the page updated"


async def test_stop_on_the_console_stops_the_turn_as_the_operator_sees_in_chat(
    console: Console,
    page: Page,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    anthropic_api.script = [tools((GATED, {})), text(DONE)]  # the gate never opens
    telegram_api.push_message("run the checks", user=OPERATOR)
    await until(lambda: len(anthropic_api.requests) == 1)
    await console.log_in(ACME_TOKEN)
    await console.open("/w/acme/")
    await expect(console.step()).to_have_text(RUNNING)
    await console.session_row().locator("a.session").click()
    session = page.locator("#session")
    await expect(session.locator('[data-field="doing"]')).to_have_text(RUNNING)
    await session.get_by_role("button", name="Stop").click()
    await expect(page.get_by_role("status")).to_contain_text("Stopped the turn")
    stopped = texts.STOPPED_BY_ADMIN.format(admin="acme/lead")
    await until(lambda: stopped in telegram_api.chat(OPERATOR))
    await expect(session).to_have_attribute("data-state", "idle")
    turn = page.locator("#turns li.turn").first
    await expect(turn).to_contain_text("stopped by admin acme/lead")  # who stopped it
    await page.get_by_role("link", name="Audit trail").click()
    await expect(page.locator("#audit")).to_contain_text("admin acme/lead stopped the turn")
    assert DONE not in telegram_api.chat(OPERATOR), "the stopped turn never answers"
    assert len(anthropic_api.requests) == 1, "nor asks the model again"


async def test_stop_keeps_its_place_and_says_when_nothing_runs(
    console: Console,
    page: Page,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    gate: Path,
) -> None:
    anthropic_api.script = [tools((GATED, {})), text(DONE)]
    telegram_api.push_message("run the checks", user=OPERATOR)
    await until(lambda: len(anthropic_api.requests) == 1)
    await console.log_in(GLOBAL_TOKEN)
    await console.open("/w/acme/")
    await console.session_row().locator("a.session").click()
    session = page.locator("#session")
    stop = session.get_by_role("button", name="Stop")
    await expect(session.locator('[data-field="doing"]')).to_have_text(RUNNING)
    await expect(stop).not_to_have_attribute("aria-disabled", "true")
    await asyncio.to_thread(gate.touch)
    await until(lambda: telegram_api.chat(OPERATOR) == [DONE])
    await expect(session).to_have_attribute("data-state", "idle")
    # the turn ended: nothing to stop, said live where Stop was (a hidden button drops focus)
    await expect(stop).to_be_visible()
    await expect(stop).to_have_attribute("aria-disabled", "true")
    await expect(stop).to_have_accessible_description("Nothing runs now.")
    await page.reload()
    await expect(session.locator('[data-field="doing"]')).to_have_text("idle")
    await expect(stop).to_have_attribute("aria-disabled", "true")  # nor on a fresh page
    await stop.press("Enter")  # not "enabled" to a click: it says so instead
    await expect(page.locator("#announce")).to_have_text(
        "Nothing runs now: there is no turn to stop."
    )


async def test_a_new_workspaces_overview_lists_a_session_that_starts_without_a_notice(
    console: Console, page: Page, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """A new workspace's overview says it has no session yet, and nothing against it; a
    session that starts while it is open is listed without a reload, and the empty state
    goes (a notice "a new session started: reload" above "No sessions yet" said both)."""
    await console.log_in(ACME_TOKEN)
    await console.open("/w/acme/")
    await page.evaluate("window.stillThisPage = true")
    empty, notice = page.get_by_text("No sessions yet"), page.get_by_text("session started")
    await expect(empty).to_be_visible()
    await expect(notice).to_have_count(0)
    anthropic_api.script = [text(DONE)]
    telegram_api.push_message("hello", user=OPERATOR)
    await expect(console.session_row()).to_be_visible()
    await expect(empty).to_have_count(0)
    await expect(notice).to_have_count(0)
    assert await page.evaluate("window.stillThisPage === true"), "no reload: the page updated"
